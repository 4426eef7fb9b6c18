/**
 * How the executor reaches fnbox: local mode runs `fnbox call` / `fnbox sync` (one process per call, in the
 * caller's working directory, so relative mount paths resolve as the caller expects); remote mode posts to
 * `fnbox serve` (`POST /v1/call`, `POST /v1/sync`). Both answer the same JSON: a result is returned
 * whatever the function did (also for an invalid request: fnbox prints an `InvalidRequest` result), and a
 * `FnboxError` is thrown only when no result came.
 */
import { spawn } from 'node:child_process';
import { resolveBinary } from '../binary.js';
import { FnboxError } from '../errors.js';
import { FnboxHttp, errorFromAnswer } from '../http.js';
import type { ExecutionResult, SyncReport } from '../types.js';

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Each chunk of the function's stdout as it is written (then the result holds all of it). */
  onStdout?: ((data: string) => void) | undefined;
  onStderr?: ((data: string) => void) | undefined;
}

export interface SyncBody {
  changes: unknown[];
  mount: unknown;
  onError?: string | undefined;
}

export interface Transport {
  call(request: unknown, options: CallOptions): Promise<ExecutionResult>;
  sync(body: SyncBody, signal?: AbortSignal): Promise<SyncReport>;
  close(): void;
}

/** How long a `fnbox` child gets to end after SIGTERM before it is SIGKILLed. */
const KILL_GRACE_MS = 5000;
const STDERR_KEEP = 16384;

export function abortError(): FnboxError {
  return new FnboxError('Cancelled', 'cancelled (the signal was aborted): fnbox killed the run', { code: 'ABORT_ERR' });
}

function isResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'string' &&
    typeof (value as { success?: unknown }).success === 'boolean';
}

function isReport(value: unknown): value is SyncReport {
  return typeof value === 'object' && value !== null && Array.isArray((value as { synced?: unknown }).synced);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A `fnbox` run that printed no result: the error its exit and stderr stand for. */
function processError(verb: string, code: number | null, signal: NodeJS.Signals | null, stderr: string): FnboxError {
  const text = stderr.trim().split('\n').filter(Boolean).slice(-5).join('\n');
  const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
  const type = /out of memory/i.test(text) ? 'OutOfMemory' : 'InternalError';
  return new FnboxError(type, `fnbox ${verb} ${how} without a result${text ? `: ${text}` : ''}`);
}

/** The result line of a stream, as a plain result. */
function resultOfLine(event: Record<string, unknown>): ExecutionResult {
  const { type: _type, ...rest } = event;
  return rest as unknown as ExecutionResult;
}

/* ---------------- local: one `fnbox` process per call ---------------- */

interface RunOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

export class LocalTransport implements Transport {
  readonly #binaryOption: string | undefined;
  readonly #cwd: string | undefined;
  readonly #environments: string[];
  #binary: string | undefined;

  constructor(binary: string | undefined, cwd: string | undefined, environments?: string) {
    this.#binaryOption = binary;
    this.#cwd = cwd;
    this.#environments = environments === undefined ? [] : [`--environments=${environments}`];
  }

  /** Found at first use, so creating an executor never throws (as the seed's does not). */
  get binary(): string {
    this.#binary ??= resolveBinary(this.#binaryOption);
    return this.#binary;
  }

  /**
   * Runs `fnbox <args>` with `input` on stdin. `onLine` (when given) gets each stdout line as it comes and
   * stdout is then not kept. An abort SIGTERMs the child (fnbox then kills its sandbox and exits) and
   * rejects once it is gone.
   */
  #run(args: string[], input: string, signal: AbortSignal | undefined, onLine?: (line: string) => void): Promise<RunOutcome> {
    if (signal?.aborted) return Promise.reject(abortError());
    const binary = this.binary;
    return new Promise<RunOutcome>((resolve, reject) => {
      const child = spawn(binary, args[0] === 'call' ? [...args, ...this.#environments] : args, {
        cwd: this.#cwd ?? process.cwd(),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let failure: unknown;
      let killTimer: NodeJS.Timeout | undefined;
      const stop = (err: unknown): void => {
        if (failure !== undefined) return;
        failure = err;
        child.kill('SIGTERM');
        killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
        killTimer.unref();
      };
      const onAbort = (): void => stop(abortError());
      signal?.addEventListener('abort', onAbort, { once: true });

      const out: Buffer[] = [];
      let pending = '';
      let stderr = '';
      if (onLine) child.stdout.setEncoding('utf8'); /* lines: never split inside a character */
      child.stdout.on('data', (chunk: Buffer | string) => {
        if (!onLine) {
          out.push(chunk as Buffer);
          return;
        }
        pending += chunk as string;
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.trim() && failure === undefined) {
            try {
              onLine(line);
            } catch (err) {
              stop(err);
            }
          }
        }
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => {
        stderr = (stderr + text).slice(-STDERR_KEEP);
      });
      /* fnbox may exit before reading all of stdin (a refused request): EPIPE is not our error. */
      child.stdin.on('error', () => {});
      child.stdin.end(input);

      child.on('error', (err: NodeJS.ErrnoException) => {
        signal?.removeEventListener('abort', onAbort);
        if (killTimer) clearTimeout(killTimer);
        reject(new FnboxError('BinaryNotFound', `cannot run ${binary}: ${err.message}`, { ...(err.code ? { code: err.code } : {}), cause: err }));
      });
      child.on('close', (code, sig) => {
        signal?.removeEventListener('abort', onAbort);
        if (killTimer) clearTimeout(killTimer);
        if (failure !== undefined) {
          reject(failure);
          return;
        }
        if (onLine && pending.trim()) {
          try {
            onLine(pending);
          } catch (err) {
            reject(err);
            return;
          }
        }
        resolve({ code, signal: sig, stdout: Buffer.concat(out), stderr });
      });
    });
  }

  async call(request: unknown, options: CallOptions): Promise<ExecutionResult> {
    const input = JSON.stringify(request);
    if (!options.onStdout && !options.onStderr) {
      const run = await this.#run(['call'], input, options.signal);
      const parsed = parseJson(run.stdout.toString('utf8'));
      if (isResult(parsed)) return parsed;
      throw processError('call', run.code, run.signal, run.stderr);
    }
    let result: ExecutionResult | undefined;
    /* A callback that throws stops the run (#run SIGTERMs fnbox) and the call rejects with its error. */
    const run = await this.#run(['call', '--stream'], input, options.signal, (line) => {
      const event = parseJson(line) as Record<string, unknown> | undefined;
      if (!event || typeof event !== 'object') return;
      if (event.type === 'stdout') options.onStdout?.(String(event.data));
      else if (event.type === 'stderr') options.onStderr?.(String(event.data));
      else if (event.type === 'result') result = resultOfLine(event);
    });
    if (result) return result;
    throw processError('call --stream', run.code, run.signal, run.stderr);
  }

  async sync(body: SyncBody, signal?: AbortSignal): Promise<SyncReport> {
    const run = await this.#run(['sync'], JSON.stringify(body), signal);
    const parsed = parseJson(run.stdout.toString('utf8'));
    if (isReport(parsed)) {
      if (parsed.error) throw new FnboxError(parsed.error.type, parsed.error.message);
      return parsed;
    }
    throw processError('sync', run.code, run.signal, run.stderr);
  }

  close(): void {}
}

/* ---------------- remote: a running `fnbox serve` ---------------- */

export class RemoteTransport implements Transport {
  readonly http: FnboxHttp;

  constructor(baseUrl: string, token: string | undefined) {
    this.http = new FnboxHttp({ baseUrl, token });
  }

  async call(request: unknown, options: CallOptions): Promise<ExecutionResult> {
    if (!options.onStdout && !options.onStderr) {
      const res = await this.http.raw('POST', '/v1/call', { body: request, signal: options.signal });
      /* 200 for every outcome, 400 with the InvalidRequest result, 503 with a SandboxSetupFailed result */
      const parsed = parseJson(res.body.toString('utf8'));
      if (isResult(parsed)) return parsed;
      throw errorFromAnswer(res.status, res.body);
    }
    /* A callback that throws leaves the loop, which hangs up: the server kills the run. */
    for await (const event of this.http.stream('POST', '/v1/call', { body: request, signal: options.signal })) {
      if (event.type === 'stdout') options.onStdout?.(event.data);
      else if (event.type === 'stderr') options.onStderr?.(event.data);
      else if (event.type === 'result') return resultOfLine(event as Record<string, unknown>);
    }
    throw new FnboxError('ConnectionLost', 'fnbox serve ended the stream without a result');
  }

  async sync(body: SyncBody, signal?: AbortSignal): Promise<SyncReport> {
    const res = await this.http.raw('POST', '/v1/sync', { body, signal });
    const parsed = parseJson(res.body.toString('utf8'));
    if (isReport(parsed)) {
      if (parsed.error) throw new FnboxError(parsed.error.type, parsed.error.message, { status: res.status });
      return parsed; /* as local mode: a report whose changes failed is still the answer */
    }
    throw errorFromAnswer(res.status, res.body);
  }

  close(): void {
    this.http.close();
  }
}
