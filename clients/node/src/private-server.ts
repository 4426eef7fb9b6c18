/**
 * Local mode's private `fnbox serve`: one per client object, on a unix socket in a temp directory only
 * this user can enter. `--die-with-parent` stops it when this process exits, even when killed, and the
 * child is unref'd so an open server never keeps Node alive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FnboxError } from './errors.js';
import { FnboxHttp } from './http.js';

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 15_000;
const STDERR_KEEP = 8192;

/* The temp directories of servers not stopped yet: removed when this process exits without stopping them
 * (the server itself stops then, by --die-with-parent; its directory would stay behind). */
const liveDirs = new Set<string>();
let exitHookInstalled = false;
function removeAtExit(dir: string): void {
  liveDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const d of liveDirs) {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  });
}

export class PrivateServer {
  readonly http: FnboxHttp;
  readonly #child: ChildProcess;
  readonly #dir: string;
  #stderr = '';
  #exited: Promise<void>;
  #exitCode: number | null = null;
  #running = true;

  private constructor(binary: string, dir: string, environments?: string) {
    this.#dir = dir;
    removeAtExit(dir);
    const socket = join(dir, 'fnbox.sock');
    /* --warm none: it runs sessions, which pre-started sandboxes do not serve */
    const args = ['serve', '--listen', `unix:${socket}`, '--die-with-parent', '--warm', 'none'];
    if (environments !== undefined) args.push(`--environments=${environments}`);
    this.#child = spawn(binary, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    /* The log must be read or the server blocks on a full pipe; only its end is kept, for errors. */
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-STDERR_KEEP);
    });
    this.#exited = new Promise<void>((resolve) => {
      this.#child.on('exit', (code, signal) => {
        this.#running = false;
        this.#exitCode = code ?? (signal ? 128 : 1);
        resolve();
      });
      this.#child.on('error', (err) => {
        this.#running = false;
        this.#stderr += `\n${err.message}`;
        resolve();
      });
    });
    this.#child.unref();
    (this.#child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    this.http = new FnboxHttp({ baseUrl: `unix:${socket}` });
  }

  /** Starts `binary serve` and resolves once it answers `/v1/health`. */
  /** environments: `--environments FILE` (default: the server reads `FNBOX_ENVIRONMENTS`). */
  static async start(binary: string, environments?: string): Promise<PrivateServer> {
    const dir = mkdtempSync(join(tmpdir(), 'fnbox-client-'));
    const server = new PrivateServer(binary, dir, environments);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (!server.#running) {
        await server.stop();
        throw new FnboxError(
          'ServerStartFailed',
          `fnbox serve (${binary}) exited with status ${server.#exitCode} before it was ready: ${server.#stderr.trim()}`,
        );
      }
      try {
        const res = await server.http.raw('GET', '/v1/health');
        if (res.status === 200) return server;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) {
        await server.stop();
        throw new FnboxError('ServerStartFailed', `fnbox serve (${binary}) was not ready after ${READY_TIMEOUT_MS / 1000} s: ${server.#stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** SIGTERM (the server ends its sessions and leaves nothing), then the temp directory goes. */
  async stop(): Promise<void> {
    this.http.close();
    if (this.#running) {
      this.#child.kill('SIGTERM');
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.#exited;
      clearTimeout(timer);
    }
    rmSync(this.#dir, { recursive: true, force: true });
    liveDirs.delete(this.#dir);
  }
}
