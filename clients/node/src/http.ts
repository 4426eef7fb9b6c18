/**
 * The HTTP transport to `fnbox serve`, over TCP (`http://host:port`) or a unix socket (`unix:/path`).
 * Plain JSON requests, raw bodies (the file routes) and NDJSON streams (`Accept: application/x-ndjson`).
 * Aborting a request closes its connection: the server then kills the run it belongs to.
 */
import http from 'node:http';
import { FnboxError } from './errors.js';

export interface EndpointOptions {
  /** `http://host:port` (a path prefix is kept) or `unix:/path/to/socket`. */
  baseUrl: string;
  /** A bearer token from the server's `--token-file`. */
  token?: string | undefined;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface RequestOptions {
  /** A JSON value (sent as JSON), or raw bytes (sent as application/octet-stream). */
  body?: unknown;
  signal?: AbortSignal | undefined;
}

/** One parsed NDJSON line of a streamed run. */
export type StreamEvent =
  | { type: 'stdout' | 'stderr'; data: string }
  | { type: 'dropped'; stdout: number; stderr: number }
  | ({ type: 'result' } & Record<string, unknown>);

interface Target {
  socketPath?: string;
  host?: string;
  port?: number;
  prefix: string;
}

function parseBaseUrl(baseUrl: string): Target {
  if (baseUrl.startsWith('unix:')) {
    const socketPath = baseUrl.slice('unix:'.length);
    if (!socketPath.startsWith('/')) {
      throw new FnboxError('InvalidArgument', `baseUrl: a unix socket needs an absolute path: ${baseUrl}`);
    }
    return { socketPath, prefix: '' };
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new FnboxError('InvalidArgument', `baseUrl: not a URL: ${baseUrl} (expected http://host:port or unix:/path)`);
  }
  if (url.protocol !== 'http:') {
    throw new FnboxError('InvalidArgument', `baseUrl: only http:// and unix: are supported, not ${url.protocol}`);
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : 80,
    prefix: url.pathname.replace(/\/+$/, ''),
  };
}

/** The error an answer other than 2xx stands for: the server's `{error: {type, message}}` when it has one. */
export function errorFromAnswer(status: number, body: Buffer): FnboxError {
  let type = `HTTP${status}`;
  let message = `fnbox serve answered ${status}`;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { type?: unknown; message?: unknown } };
    if (parsed && typeof parsed.error === 'object' && parsed.error !== null) {
      if (typeof parsed.error.type === 'string') type = parsed.error.type;
      if (typeof parsed.error.message === 'string') message = parsed.error.message;
    }
  } catch {
    const text = body.toString('utf8').trim();
    if (text) message = `${message}: ${text.slice(0, 500)}`;
  }
  return new FnboxError(type, message, { status, ...(status === 404 ? { code: 'ENOENT' } : {}) });
}

function abortError(): FnboxError {
  return new FnboxError('Cancelled', 'cancelled (the signal was aborted): fnbox killed the run', { code: 'ABORT_ERR' });
}

/** A client of one `fnbox serve`. Connections are kept alive and reused. */
export class FnboxHttp {
  readonly baseUrl: string;
  readonly #target: Target;
  readonly #token: string | undefined;
  readonly #agent: http.Agent;

  constructor(options: EndpointOptions) {
    this.baseUrl = options.baseUrl;
    this.#target = parseBaseUrl(options.baseUrl);
    this.#token = options.token;
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  }

  /** Closes the idle kept-alive connections (requests in flight finish). */
  close(): void {
    this.#agent.destroy();
  }

  #open(method: string, path: string, options: RequestOptions, accept: string): { req: http.ClientRequest; payload: Buffer | undefined } {
    const headers: http.OutgoingHttpHeaders = { Accept: accept };
    let payload: Buffer | undefined;
    if (options.body instanceof Uint8Array) {
      payload = Buffer.from(options.body.buffer, options.body.byteOffset, options.body.byteLength);
      headers['Content-Type'] = 'application/octet-stream';
    } else if (options.body !== undefined) {
      payload = Buffer.from(JSON.stringify(options.body), 'utf8');
      headers['Content-Type'] = 'application/json';
    }
    if (payload) headers['Content-Length'] = payload.length;
    if (this.#token !== undefined) headers.Authorization = `Bearer ${this.#token}`;
    const t = this.#target;
    const req = http.request({
      method,
      path: t.prefix + path,
      headers,
      agent: this.#agent,
      ...(t.socketPath ? { socketPath: t.socketPath } : { host: t.host, port: t.port }),
    });
    return { req, payload };
  }

  /** Sends one request and reads the whole answer. Rejects only when no answer came. */
  raw(method: string, path: string, options: RequestOptions = {}, accept = 'application/json'): Promise<RawResponse> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise<RawResponse>((resolve, reject) => {
      const { req, payload } = this.#open(method, path, options, accept);
      const onAbort = (): void => {
        req.destroy(abortError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      req.on('error', (err) => {
        done();
        reject(err instanceof FnboxError ? err : transportError(this.baseUrl, err));
      });
      req.on('response', (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => parts.push(b));
        res.on('error', (err) => {
          done();
          reject(err instanceof FnboxError ? err : transportError(this.baseUrl, err));
        });
        res.on('end', () => {
          done();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) });
        });
      });
      req.end(payload);
    });
  }

  /** A JSON request whose 2xx answer is JSON (or empty: `undefined`); any other answer throws its error. */
  async json<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.raw(method, path, options);
    if (res.status < 200 || res.status > 299) throw errorFromAnswer(res.status, res.body);
    if (res.body.length === 0) return undefined as T;
    return JSON.parse(res.body.toString('utf8')) as T;
  }

  /**
   * A streamed run: yields each NDJSON line as it arrives, the last being the `result`. An answer that is
   * not a stream (refused before anything ran: 400, 401, 404, 413, 503) throws its error. Leaving the loop
   * early, or aborting, closes the connection: the server kills the run.
   */
  async *stream(method: string, path: string, options: RequestOptions = {}): AsyncGenerator<StreamEvent> {
    const signal = options.signal;
    if (signal?.aborted) throw abortError();
    const { req, payload } = this.#open(method, path, options, 'application/x-ndjson');
    const queue: Array<Buffer | Error | null> = [];
    let wake: (() => void) | undefined;
    const push = (item: Buffer | Error | null): void => {
      queue.push(item);
      wake?.();
      wake = undefined;
    };
    let response: http.IncomingMessage | undefined;
    const onAbort = (): void => {
      req.destroy(abortError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => push(err instanceof FnboxError ? err : transportError(this.baseUrl, err)));
    req.on('response', (res) => {
      response = res;
      res.on('data', (b: Buffer) => push(b));
      res.on('error', (err) => push(err instanceof FnboxError ? err : transportError(this.baseUrl, err)));
      res.on('end', () => push(null));
      res.on('aborted', () => push(new FnboxError('ConnectionLost', 'fnbox serve closed the stream before its result')));
    });
    req.end(payload);
    let pending: Buffer = Buffer.alloc(0);
    let sawResult = false;
    let ended = false;
    try {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r));
        const item = queue.shift()!;
        if (item instanceof Error) throw item;
        const status = response?.statusCode ?? 0;
        const isStream = String(response?.headers['content-type'] ?? '').startsWith('application/x-ndjson');
        if (item === null) {
          ended = true;
          if (!isStream || status < 200 || status > 299) throw errorFromAnswer(status, pending);
          if (pending.length > 0) throw new FnboxError('ConnectionLost', 'fnbox serve ended the stream inside a line');
          if (!sawResult) throw new FnboxError('ConnectionLost', 'fnbox serve ended the stream without a result');
          return;
        }
        pending = pending.length ? Buffer.concat([pending, item]) : item;
        if (!isStream || status < 200 || status > 299) continue; /* an error body: read it whole */
        let nl: number;
        while ((nl = pending.indexOf(10)) >= 0) {
          const line = pending.subarray(0, nl).toString('utf8');
          pending = pending.subarray(nl + 1);
          if (!line.trim()) continue;
          const event = JSON.parse(line) as StreamEvent;
          if (event.type === 'result') sawResult = true;
          yield event;
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!ended) req.destroy(); /* left early or failed: hang up, so the run is killed */
    }
  }
}

function transportError(baseUrl: string, err: Error & { code?: string }): FnboxError {
  return new FnboxError('ConnectionFailed', `fnbox serve at ${baseUrl}: ${err.message}`, {
    ...(err.code ? { code: err.code } : {}),
    cause: err,
  });
}
