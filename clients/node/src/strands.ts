/**
 * `fnbox/strands`: a Strands Agents `Sandbox` whose commands, code and files live in one fnbox session.
 *
 * `@strands-agents/sdk` is a peer dependency: this module imports the app's own copy of it, so
 * `FnboxSandbox` is an `instanceof Sandbox` the SDK accepts and the errors it throws are the SDK's own
 * classes (`SandboxTimeoutError`, `SandboxAbortError`, `SandboxPathNotFoundError`). The package root
 * (`fnbox`) never loads the SDK.
 *
 * Semantics follow the SDK's built-in sandboxes (its local environment and `DockerSandbox`): stream
 * chunks `{type: 'streamChunk', data, streamType}` as output arrives, then exactly one
 * `{type: 'executionResult', exitCode, stdout, stderr, outputFiles: []}`; a non-zero exit is returned,
 * not thrown; 127 for a missing command or interpreter; 128 + n for a death by signal n; a timeout throws
 * `SandboxTimeoutError` with the partial output; an aborted signal throws `SandboxAbortError` and the
 * command is killed (the stream is hung up: the server kills the run).
 */
import {
  Sandbox,
  SandboxAbortError,
  SandboxPathNotFoundError,
  SandboxTimeoutError,
  type ExecuteOptions,
  type ExecutionResult,
  type FileInfo,
  type StreamChunk,
  type Tool,
} from '@strands-agents/sdk';
import { DEFAULT_FILE_EDITOR_DESCRIPTION, makeFileEditor } from '@strands-agents/sdk/vended-tools/file-editor';
import { SANDBOX_SHELL_DESCRIPTION, makeShell } from '@strands-agents/sdk/vended-tools/shell';
import { resolveBinary } from './binary.js';
import { FnboxError } from './errors.js';
import { FnboxHttp, errorFromAnswer, type RawResponse } from './http.js';
import { PrivateServer } from './private-server.js';
import type { Dependencies } from './types.js';

export { FnboxError } from './errors.js';

/** The longest `timeout` fnbox serve allows for one command (seconds); also what "no timeout" runs with. */
export const MAX_TIMEOUT_SECONDS = 3600;

/* The SDK's own patterns (sandbox/constants.js, not exported from its root): same names refused, same words. */
const ENV_KEY_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LANGUAGE_PATTERN = /^[a-zA-Z0-9._-]+$/;

/**
 * The `language` names fnbox's session code route runs itself (`POST /v1/sessions/{id}/code`): the code
 * is put in a file and run by that interpreter (or compiled, for C and C++). Any other name is run as the
 * SDK's sandboxes do, as a program reading the code on its stdin (`perl`, `python3.12`, `awk`...).
 */
const SERVER_LANGUAGES = new Set(['python3', 'python', 'node', 'javascript', 'js', 'ruby', 'php', 'sh', 'bash', 'c', 'cpp', 'c++']);

/* A language the server does not know: the program of that name reads the code on stdin. A missing one
 * answers as the server does for an unknown language (exit 127, "Language interpreter not found: x"). */
const STDIN_INTERPRETER =
  'command -v -- "$1" >/dev/null 2>&1 || { printf "Language interpreter not found: %s\\n" "$1" >&2; exit 127; }; exec "$1"';

/** Options of the session FnboxSandbox opens (the body of `POST /v1/sessions`; see fnbox's README, Server). */
export interface FnboxSessionOptions {
  /** The working directory: relative paths and commands start there. Default `/workspace`. */
  workdir?: string;
  /** Files written before the first command: `{path: text | {base64}}`. */
  files?: Record<string, string | { base64: string }>;
  /** `env`, `network`, `childProcess`, `preset`, as a call's (`childProcess` is allowed unless given). */
  permissions?: unknown;
  /** A call's limits; `memoryBytes`, `pids`, `workspaceBytes`, `tmpBytes`, `inodes` are the whole session's,
   * `stdoutBytes` / `stderrBytes` (default 1 MiB, at most 64 MiB) each command's. */
  limits?: Record<string, number>;
  /** Seconds without a request before the server closes the session (default 900, at most 86400). */
  idleTimeout?: number;
  /** Seconds the session may live at all (default 3600, at most 86400). */
  maxLifetime?: number;
  /** Host directories served for the session's life (see fnbox's README, Files and mounts). */
  mount?: unknown;
  /** The server's named environment the session's sandbox is built in (its commands, code and kernels);
   * without it, the host's. */
  environment?: string;
  /** Packages installed once for the session, before its sandbox starts (`{python: ['six==1.16.0'],
   * javascript: ['left-pad@1.3.0']}`), from the environment's configured index: its commands, code and kernels
   * import them. Without an index configured the session is refused (`InvalidRequest` naming `dependencies`). */
  dependencies?: Dependencies;
  [option: string]: unknown;
}

export interface FnboxSandboxOptions {
  /** A running `fnbox serve`: `http://host:port` or `unix:/path/to/socket`. Without it (local mode) a private
   * `fnbox serve` is started on a unix socket at first use and stopped by `close()`. */
  baseUrl?: string;
  /** A bearer token of that server (`--token-file`). */
  token?: string;
  /** Local mode: the fnbox binary (else `FNBOX_BIN`, else `fnbox` on `PATH`). */
  binary?: string;
  /** The id of an open session on `baseUrl` to work in instead of opening one. `close()` leaves it open:
   * whoever opened it closes it. */
  session?: string;
  /** Options of the session opened at first use (ignored with `session`). */
  sessionOptions?: FnboxSessionOptions;
  /** Local mode: the named environments file (`fnbox serve --environments FILE`; default:
   * `FNBOX_ENVIRONMENTS`) that `sessionOptions.environment` names one of. */
  environments?: string;
}

/** Options of `FnboxSandbox.runCode`. */
export interface RunCodeOptions {
  /** `python` (`py`, `python3`), `javascript` (`js`, `node`), `ruby` (`rb`) or `php` with `kernel`; without
   * it, any language `executeCode` takes. Default `python`. */
  language?: string;
  /** Run in the session's long-lived interpreter of that language (default true): variables, imports and
   * loaded data stay for the next `runCode`. `false`: a fresh process, as `executeCode`. */
  kernel?: boolean;
  /** Seconds (default 3600, the server's maximum). A kernel's code is interrupted at the timeout and its
   * state kept; code that ignores the interrupt is killed with its kernel (`kernelRestarted` on the error). */
  timeout?: number;
  /** Aborting it hangs up: the server interrupts the code (a kernel keeps its state) and this rejects with
   * `SandboxAbortError`. */
  signal?: AbortSignal;
  /** Called with each piece of the output as it comes. */
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
}

/** What `FnboxSandbox.runCode` resolves to, whatever the code did. */
export interface CodeRunResult {
  /** `success`, `error` (the code threw), `crash` (the interpreter died)... */
  status: string;
  /** The last expression's value, converted to JSON as a call's result (kernel only; else undefined). */
  result: unknown;
  /** The code's exception `{type, message, stack}` (kernel), or undefined. */
  error: { type: string; message: string; stack?: string } | undefined;
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The kernel was started afresh for this run or killed by it: earlier state is gone. */
  kernelRestarted: boolean;
}

interface Connection {
  http: FnboxHttp;
  server: PrivateServer | undefined;
  id: string;
  owned: boolean;
}

/** The result line of a streamed run (the fields this module reads). */
interface RunResult {
  status?: string;
  exitCode?: number;
  stdout?: string;
  stderr?: string;
  error?: { type?: string; message?: string };
}

function checkEnv(env: Record<string, string> | undefined): void {
  if (!env) return;
  for (const key of Object.keys(env)) {
    if (!ENV_KEY_PATTERN.test(key)) throw new Error(`Invalid environment variable name: ${key}`);
  }
}

/** The server's error for an answer that is not 2xx, with Node's code where one applies. A session the
 * server no longer has is a NotFound without `ENOENT`: it is not a missing file. */
function remap(err: unknown): unknown {
  if (!(err instanceof FnboxError) || err.status === undefined) return err;
  if (err.status === 404 && err.message.startsWith("session '")) {
    return new FnboxError(err.type, err.message, { status: err.status });
  }
  if (err.status === 403 && err.code === undefined) {
    return new FnboxError(err.type, err.message, { status: err.status, code: 'EACCES' });
  }
  if (err.status === 400 && err.code === undefined && /is a directory/i.test(err.message)) {
    return new FnboxError(err.type, err.message, { status: err.status, code: 'EISDIR' });
  }
  return err;
}

function answerError(res: RawResponse): unknown {
  return remap(errorFromAnswer(res.status, res.body));
}

function timeoutError(seconds: number, stdout: string, stderr: string): SandboxTimeoutError {
  /* SDK 1.19 takes (seconds, stdout, stderr); 1.16 only seconds: the output is set on the object either way. */
  const Ctor = SandboxTimeoutError as unknown as new (s: number, out?: string, err?: string) => SandboxTimeoutError;
  const err = new Ctor(seconds, stdout, stderr);
  Object.assign(err, { stdout, stderr });
  return err;
}

/**
 * A file's content as bytes: a `Uint8Array` (a `Buffer` too) as it is, a string as UTF-8. Anything else
 * would reach the HTTP layer as a JSON body, and the file would hold its JSON text.
 */
function fileBytes(content: unknown): Uint8Array {
  if (typeof content === 'string') return new TextEncoder().encode(content);
  if (content instanceof Uint8Array) return content;
  if (Object.prototype.toString.call(content) === '[object Uint8Array]') {
    /* another realm's (a vm context's): this realm's view of the same bytes, which the HTTP layer sends raw */
    const view = content as Uint8Array;
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  }
  const what = content === null ? 'null' : typeof content === 'object' ? (content.constructor?.name ?? 'object') : typeof content;
  throw new TypeError(`writeFile: content must be a Uint8Array or a string, got ${what}`);
}

/**
 * A Strands `Sandbox` on fnbox: every command, code run and file operation of one instance happens in one
 * fnbox session (a sandbox that keeps its files across calls; each command is a fresh `sh`). The session is
 * opened at first use; `close()` ends it (and local mode's private server).
 */
export class FnboxSandbox extends Sandbox {
  readonly #options: FnboxSandboxOptions;
  readonly #remote: FnboxHttp | undefined;
  #opening: Promise<Connection> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  #sessionId: string | undefined;

  constructor(options: FnboxSandboxOptions = {}) {
    super();
    this.#options = { ...options };
    if (options.session !== undefined && options.baseUrl === undefined) {
      throw new FnboxError('InvalidArgument', 'FnboxSandbox: `session` names a session of a running server: give its `baseUrl` too');
    }
    if (options.session !== undefined && !/^[A-Za-z0-9_-]+$/.test(options.session)) {
      throw new FnboxError('InvalidArgument', `FnboxSandbox: not a session id: ${options.session}`);
    }
    /* A bad baseUrl is refused now; nothing connects before the first use. */
    this.#remote = options.baseUrl !== undefined ? new FnboxHttp({ baseUrl: options.baseUrl, token: options.token }) : undefined;
  }

  /** The session's id once it is open (or the `session` given), else undefined. */
  get sessionId(): string | undefined {
    return this.#sessionId ?? this.#options.session;
  }

  /** Opens the session now (it is otherwise opened by the first operation); resolves to its id. */
  async open(): Promise<string> {
    return (await this.#connect()).id;
  }

  /**
   * Ends the session (what runs in it is killed, its files are gone) unless it was given as `session`, and
   * stops local mode's private server. A sandbox never used has nothing to close. Afterwards every
   * operation throws a `FnboxError` of type `Closed`. Calling it again waits for the first close.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    const opening = this.#opening;
    if (!opening) {
      this.#remote?.close();
      return;
    }
    let conn: Connection;
    try {
      conn = await opening;
    } catch {
      this.#remote?.close();
      return; /* it never opened: its failure already cleaned up */
    }
    let failure: unknown;
    if (conn.owned) {
      try {
        const res = await conn.http.raw('DELETE', `/v1/sessions/${conn.id}`);
        /* 404: already gone (expired or closed by the server). */
        if ((res.status < 200 || res.status > 299) && res.status !== 404) failure = answerError(res);
      } catch (err) {
        failure = err;
      }
    }
    if (conn.server) await conn.server.stop();
    conn.http.close();
    if (failure && !conn.server) throw failure; /* local mode: stopping the server ended the session anyway */
  }

  #connect(): Promise<Connection> {
    if (this.#closed) return Promise.reject(new FnboxError('Closed', 'FnboxSandbox: closed'));
    if (!this.#opening) {
      const opening = this.#open();
      this.#opening = opening;
      opening.catch(() => {
        if (this.#opening === opening && !this.#closed) this.#opening = undefined; /* the next use tries again */
      });
    }
    return this.#opening;
  }

  async #open(): Promise<Connection> {
    let server: PrivateServer | undefined;
    let http: FnboxHttp;
    if (this.#remote) {
      http = this.#remote;
    } else {
      server = await PrivateServer.start(resolveBinary(this.#options.binary), this.#options.environments);
      http = server.http;
    }
    try {
      if (this.#options.session !== undefined) {
        const id = this.#options.session;
        const res = await http.raw('GET', `/v1/sessions/${id}`);
        if (res.status !== 200) throw answerError(res);
        this.#sessionId = id;
        return { http, server, id, owned: false };
      }
      const info = await http.json<{ id?: unknown }>('POST', '/v1/sessions', { body: this.#options.sessionOptions ?? {} });
      if (!info || typeof info.id !== 'string') throw new FnboxError('InvalidAnswer', 'fnbox serve opened a session without an id');
      this.#sessionId = info.id; /* a close() that came meanwhile waits for this, then ends it */
      return { http, server, id: info.id, owned: true };
    } catch (err) {
      if (server) await server.stop();
      throw remap(err);
    }
  }

  /** Runs `command` with `sh -c` in the session's sandbox (a fresh shell each time; files persist). */
  async *executeStreaming(command: string, options?: ExecuteOptions): AsyncGenerator<StreamChunk | ExecutionResult> {
    checkEnv(options?.env);
    yield* this.#run('commands', { command }, options);
  }

  /**
   * Runs `code` with the interpreter `language`: `python3`/`python`, `node`/`javascript`/`js`, `ruby`, `php`,
   * `sh`, `bash` (and `c`, `cpp`, compiled) through fnbox's code route; any other name as a program reading
   * the code on its stdin, as the SDK's own sandboxes run every language. A missing interpreter: exit 127.
   */
  async *executeCodeStreaming(code: string, language: string, options?: ExecuteOptions): AsyncGenerator<StreamChunk | ExecutionResult> {
    if (!LANGUAGE_PATTERN.test(language)) {
      throw new Error(`language parameter contains invalid characters: ${language}`);
    }
    checkEnv(options?.env);
    if (SERVER_LANGUAGES.has(language)) {
      yield* this.#run('code', { code, language }, options);
    } else {
      yield* this.#run('commands', { command: STDIN_INTERPRETER, args: [language], stdin: code }, options);
    }
  }

  /** The session for a run whose signal may abort it: before, during or right after opening. */
  async #connectFor(signal: AbortSignal | undefined): Promise<Connection> {
    if (signal?.aborted) throw new SandboxAbortError();
    let conn: Connection;
    try {
      conn = await this.#connect();
    } catch (err) {
      if (signal?.aborted) throw new SandboxAbortError();
      throw err;
    }
    if (signal?.aborted) throw new SandboxAbortError();
    return conn;
  }

  async *#run(route: 'commands' | 'code', body: Record<string, unknown>, options: ExecuteOptions | undefined): AsyncGenerator<StreamChunk | ExecutionResult> {
    const signal = options?.signal;
    const timeout = options?.timeout ?? MAX_TIMEOUT_SECONDS;
    const request: Record<string, unknown> = { ...body, timeout };
    if (options?.cwd !== undefined) request.cwd = options.cwd;
    if (options?.env !== undefined && Object.keys(options.env).length > 0) request.env = options.env;

    const conn = await this.#connectFor(signal);

    let streamedOut = '';
    let streamedErr = '';
    let result: RunResult | undefined;
    try {
      for await (const event of conn.http.stream('POST', `/v1/sessions/${conn.id}/${route}`, { body: request, signal })) {
        if (event.type === 'stdout' || event.type === 'stderr') {
          if (event.data === '') continue;
          if (event.type === 'stdout') streamedOut += event.data;
          else streamedErr += event.data;
          yield { type: 'streamChunk', data: event.data, streamType: event.type };
        } else if (event.type === 'result') {
          result = event as RunResult;
        }
        /* `dropped` (a reader slower than the output): the rest comes with the result, below. */
      }
    } catch (err) {
      if (!result) {
        if (signal?.aborted) throw new SandboxAbortError();
        throw remap(err);
      }
      /* the result came whole: what broke after it does not matter */
    }
    if (!result) throw new FnboxError('ConnectionLost', 'fnbox serve ended the stream without a result');

    const stdout = typeof result.stdout === 'string' ? result.stdout : streamedOut;
    const stderr = typeof result.stderr === 'string' ? result.stderr : streamedErr;
    const status = result.status;
    if (status === 'timeout') throw timeoutError(timeout, stdout, stderr);
    if (status === 'terminated' && signal?.aborted) throw new SandboxAbortError();
    if (status === 'error' && result.error && typeof result.error === 'object') {
      /* refused before it ran (InvalidRequest naming the field, SandboxSetupFailed...): not an exit status */
      throw new FnboxError(String(result.error.type ?? 'Error'), String(result.error.message ?? 'fnbox could not run the command'));
    }
    /* Output past what was streamed (after a `dropped` line) goes out before the result, so the chunks
     * always add up to stdout and stderr. */
    if (stdout.length > streamedOut.length && stdout.startsWith(streamedOut)) {
      yield { type: 'streamChunk', data: stdout.slice(streamedOut.length), streamType: 'stdout' };
    }
    if (stderr.length > streamedErr.length && stderr.startsWith(streamedErr)) {
      yield { type: 'streamChunk', data: stderr.slice(streamedErr.length), streamType: 'stderr' };
    }
    const exitCode = typeof result.exitCode === 'number' ? result.exitCode : 1;
    yield { type: 'executionResult', exitCode, stdout, stderr, outputFiles: [] };
  }

  /**
   * Runs `code` and resolves to `{status, result, error, stdout, stderr, exitCode, kernelRestarted}` whatever
   * the code did: its exception is `error` (`{type, message, stack}`), not a rejection. With `kernel` (the
   * default) the code runs in the session's long-lived `python` or `javascript` interpreter, which keeps
   * its state between runs (as a Jupyter kernel) and `result` is the last expression's value; with
   * `kernel: false` it runs as `executeCode` does (a fresh process; `result` undefined). A timeout rejects with
   * the SDK's `SandboxTimeoutError` (the partial output on it, and `kernelRestarted`), an aborted `signal` with
   * `SandboxAbortError`; a request refused before it ran (an unknown kernel language...) with a `FnboxError`.
   * (The SDK's `executeCode` stays stateless: kernels are only here.)
   */
  async runCode(code: string, options: RunCodeOptions = {}): Promise<CodeRunResult> {
    const language = options.language ?? 'python';
    const kernel = options.kernel ?? true;
    const { signal, onStdout, onStderr } = options;
    if (typeof code !== 'string') throw new FnboxError('InvalidArgument', 'runCode: code must be a string');
    if (!LANGUAGE_PATTERN.test(language)) {
      throw new Error(`language parameter contains invalid characters: ${language}`);
    }
    if (!kernel) {
      let stdout = '';
      let stderr = '';
      let exitCode = 1;
      const execOptions: ExecuteOptions = {};
      if (options.timeout !== undefined) execOptions.timeout = options.timeout;
      if (signal !== undefined) execOptions.signal = signal;
      for await (const item of this.executeCodeStreaming(code, language, execOptions)) {
        if (item.type === 'streamChunk') {
          if (item.streamType === 'stdout') onStdout?.(item.data);
          else onStderr?.(item.data);
        } else {
          ({ stdout, stderr, exitCode } = item);
        }
      }
      return { status: exitCode === 0 ? 'success' : 'error', result: undefined, error: undefined, stdout, stderr, exitCode, kernelRestarted: false };
    }
    const timeout = options.timeout ?? MAX_TIMEOUT_SECONDS;
    const conn = await this.#connectFor(signal);

    let streamedOut = '';
    let streamedErr = '';
    let result: (RunResult & { result?: unknown; kernelRestarted?: boolean; error?: { type?: string; message?: string; stack?: string } }) | undefined;
    try {
      const path = `/v1/sessions/${conn.id}/kernels/${encodeURIComponent(language)}/execute`;
      for await (const event of conn.http.stream('POST', path, { body: { code, timeout }, signal })) {
        if (event.type === 'stdout' || event.type === 'stderr') {
          if (event.data === '') continue;
          if (event.type === 'stdout') {
            streamedOut += event.data;
            onStdout?.(event.data);
          } else {
            streamedErr += event.data;
            onStderr?.(event.data);
          }
        } else if (event.type === 'result') {
          result = event as typeof result;
        }
      }
    } catch (err) {
      if (!result) {
        if (signal?.aborted) throw new SandboxAbortError();
        throw remap(err);
      }
    }
    if (!result) throw new FnboxError('ConnectionLost', 'fnbox serve ended the stream without a result');

    const stdout = typeof result.stdout === 'string' ? result.stdout : streamedOut;
    const stderr = typeof result.stderr === 'string' ? result.stderr : streamedErr;
    const kernelRestarted = result.kernelRestarted === true;
    const status = String(result.status ?? 'error');
    if (status === 'timeout') throw Object.assign(timeoutError(timeout, stdout, stderr), { kernelRestarted });
    if (status === 'terminated' && signal?.aborted) throw new SandboxAbortError();
    const err = result.error && typeof result.error === 'object' ? result.error : undefined;
    if (err && ['InvalidRequest', 'SandboxSetupFailed', 'KernelFeatureMissing', 'Overloaded'].includes(String(err.type))) {
      throw new FnboxError(String(err.type), String(err.message ?? 'fnbox could not run the code'));
    }
    /* output past what was streamed (after a `dropped` line): the callbacks always add up to stdout/stderr */
    if (stdout.length > streamedOut.length && stdout.startsWith(streamedOut)) onStdout?.(stdout.slice(streamedOut.length));
    if (stderr.length > streamedErr.length && stderr.startsWith(streamedErr)) onStderr?.(stderr.slice(streamedErr.length));
    return {
      status,
      result: result.result,
      error: err ? { type: String(err.type ?? 'Error'), message: String(err.message ?? ''), ...(typeof err.stack === 'string' ? { stack: err.stack } : {}) } : undefined,
      stdout,
      stderr,
      exitCode: typeof result.exitCode === 'number' ? result.exitCode : status === 'success' ? 0 : 1,
      kernelRestarted,
    };
  }

  /** Restarts the session's kernel of `language` (default `python`): its state is lost, the next `runCode`
   * starts a fresh one. A kernel never started: nothing to do. */
  async restartKernel(language = 'python'): Promise<void> {
    if (!LANGUAGE_PATTERN.test(language)) {
      throw new Error(`language parameter contains invalid characters: ${language}`);
    }
    const conn = await this.#connect();
    const res = await conn.http.raw('DELETE', `/v1/sessions/${conn.id}/kernels/${encodeURIComponent(language)}`);
    if (res.status < 200 || res.status > 299) throw answerError(res);
  }

  /** The file's bytes. A missing file rejects with a `FnboxError` whose `code` is `ENOENT`. */
  async readFile(path: string): Promise<Uint8Array> {
    const conn = await this.#connect();
    const res = await conn.http.raw('GET', `/v1/sessions/${conn.id}/files?path=${encodeURIComponent(path)}`, {}, 'application/octet-stream');
    if (res.status !== 200) throw answerError(res);
    return res.body;
  }

  /**
   * Writes the file, creating its parent directories. A string is written as its UTF-8 bytes (as
   * `writeText` does: JavaScript callers and agents' tools pass text here although the SDK types it
   * `Uint8Array`); anything else but a `Uint8Array` is a `TypeError`, before anything is written.
   */
  async writeFile(path: string, content: Uint8Array | string): Promise<void> {
    const bytes = fileBytes(content);
    const conn = await this.#connect();
    const res = await conn.http.raw('PUT', `/v1/sessions/${conn.id}/files?path=${encodeURIComponent(path)}`, { body: bytes });
    if (res.status < 200 || res.status > 299) throw answerError(res);
  }

  /** Removes the file (or an empty directory). A missing one rejects with `code` `ENOENT`. */
  async removeFile(path: string): Promise<void> {
    const conn = await this.#connect();
    const res = await conn.http.raw('DELETE', `/v1/sessions/${conn.id}/files?path=${encodeURIComponent(path)}`);
    if (res.status < 200 || res.status > 299) throw answerError(res);
  }

  /** The directory's entries `{name, isDir, size}`, sorted by name. A missing path or a file throws
   * `SandboxPathNotFoundError`. */
  async listFiles(path: string): Promise<FileInfo[]> {
    const conn = await this.#connect();
    const res = await conn.http.raw('GET', `/v1/sessions/${conn.id}/files/list?path=${encodeURIComponent(path)}`);
    if (res.status !== 200) {
      const err = answerError(res);
      if (err instanceof FnboxError && err.status === 404 && err.code === 'ENOENT') throw new SandboxPathNotFoundError(path);
      throw err;
    }
    const entries = JSON.parse(res.body.toString('utf8')) as Array<{ name: string; isDir?: boolean; size?: number }>;
    return entries.map((e) => ({ name: e.name, isDir: e.isDir === true, ...(typeof e.size === 'number' ? { size: e.size } : {}) }));
  }

  /** `sandbox_file_editor` and `sandbox_shell`, the SDK's own tools bound to this sandbox. */
  getTools(): Tool[] {
    const where = this.#options.session !== undefined ? `fnbox session ${this.#options.session}` : 'an fnbox sandbox session';
    const workdir =
      this.#options.session === undefined ? ` Working directory: ${this.#options.sessionOptions?.workdir ?? '/workspace'}.` : '';
    return [
      makeFileEditor(this, {
        name: 'sandbox_file_editor',
        description: `${DEFAULT_FILE_EDITOR_DESCRIPTION} Files are in ${where}.`,
      }),
      makeShell(this, {
        name: 'sandbox_shell',
        description: `${SANDBOX_SHELL_DESCRIPTION} Runs in ${where}.${workdir}`,
      }),
    ];
  }
}
