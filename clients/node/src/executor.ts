/**
 * `createExecutor()`: a drop-in for `@isdk/sandbox-executor`'s executor, running each call in fnbox.
 *
 * Local mode (no `baseUrl`) runs `fnbox call` per call in the caller's working directory; remote mode
 * posts to a `fnbox serve`. Requests (v0.1 and v0.2 shapes) go to fnbox as they are and its result comes
 * back as it is, whatever the function did. The seed's events are raised from what the result reports;
 * `beforeSync` handlers are asked before anything is written: with a handler registered, a batch-synced
 * call runs with manual sync, the handlers answer change by change, and then the accepted changes are
 * written (`fnbox sync`), with the same rules and report a batch sync has.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { FnboxError } from './errors.js';
import { presentFiles, toSeedChange, toSyncChange, type Kind } from './executor/changes.js';
import { SeedEventEmitter } from './executor/events.js';
import { renderReport } from './executor/report.js';
import {
  getMount,
  getPermissions,
  getReporting,
  prepareRequest,
  presetAllowsAllFs,
  withMount,
  withReporting,
} from './executor/request.js';
import { LocalTransport, RemoteTransport, type Transport } from './executor/transport.js';
import type {
  AfterSyncEventData,
  BeforeSyncEventResult,
  ExecutionResult,
  FileChange,
  FileChangeSummary,
  FunctionCallRequest,
  MountConfig,
  PermissionDeniedRecord,
  ResultEvent,
  SyncDetail,
  SyncErrorBehavior,
  SyncEventConfig,
  SyncReport,
  SyncResult,
  WireFileChange,
} from './types.js';

export interface ExecutorOptions {
  /** The workdir of requests that name none (fnbox's own default is `/workspace`, as the seed's). */
  defaultWorkdir?: string;
  /** `allowAbort`: whether a `beforeSync` answer of ABORT stops the sync (default true without this option). */
  syncEventConfig?: SyncEventConfig;
  /** Local mode: the `fnbox` binary (default: `FNBOX_BIN`, then `fnbox` on `PATH`). */
  binary?: string;
  /** Local mode: the directory fnbox runs in, against which relative mount paths resolve (default: `process.cwd()` at each call). */
  cwd?: string;
  /** Local mode: the named environments file requests may choose from with `environment`
   * (`fnbox call --environments FILE`; default: `FNBOX_ENVIRONMENTS`, else none). */
  environments?: string;
  /** Remote mode: a `fnbox serve`, `http://host:port` or `unix:/path/to.sock`. */
  baseUrl?: string;
  /** Remote mode: a bearer token from the server's `--token-file`. */
  token?: string;
}

export interface ExecuteOptions {
  /** Aborting kills the run (local: SIGTERM to `fnbox call`; remote: the connection is closed) and rejects with `FnboxError` type `Cancelled`. */
  signal?: AbortSignal;
  /** Each chunk of the function's stdout as it is written (the result still holds all of it). */
  onStdout?: (data: string) => void;
  /** Each chunk of the function's stderr as it is written. */
  onStderr?: (data: string) => void;
}

export interface SyncFilesOptions {
  /** Default `continue`, as the seed's `syncFiles`. */
  onError?: SyncErrorBehavior;
  signal?: AbortSignal;
}

const KINDS: Kind[] = ['created', 'modified', 'deleted'];

interface Item {
  /** fnbox's form, as `fnbox sync` gets it. */
  change: WireFileChange;
  /** The seed's form, as the handlers get it. */
  seed: FileChange;
  kind: Kind;
  /** Its index in the list fnbox's sync would get (for fnbox's order). */
  idx: number;
  /** Inside a mount, not its root: the changes fnbox asks `beforeSync` about. */
  askable: boolean;
  realPath: string | undefined;
}

/** fnbox's sync order (src/fs/sync.c cmp_order): deletions deepest first, then the rest shallowest first. */
function depth(path: string): number {
  let n = 0;
  for (const c of path) if (c === '/') n++;
  return n;
}

function syncOrder(a: Item, b: Item): number {
  const ga = a.kind === 'deleted' ? 0 : 1;
  const gb = b.kind === 'deleted' ? 0 : 1;
  if (ga !== gb) return ga - gb;
  const da = depth(a.change.path);
  const db = depth(b.change.path);
  if (da !== db) return ga === 0 ? db - da : da - db;
  return a.idx - b.idx;
}

/** The seed's `FileChangeSummary` methods, not enumerable so the JSON shape is unchanged. */
function addSummaryMethods(files: FileChangeSummary): void {
  const define = (name: string, value: unknown): void => {
    Object.defineProperty(files, name, { value, enumerable: false, configurable: true, writable: true });
  };
  define('hasChanges', function (this: FileChangeSummary) {
    return this.created.length + this.modified.length + this.deleted.length > 0;
  });
  define('all', function (this: FileChangeSummary) {
    return [...this.created, ...this.modified, ...this.deleted];
  });
  define('byPath', function (this: FileChangeSummary, path: string) {
    return [...this.created, ...this.modified, ...this.deleted].find((c) => c.path === path);
  });
}

/** The result's keys in fnbox's order, `sync` and `events` after `files`, as a batch call prints them. */
function ordered(result: ExecutionResult): ExecutionResult {
  const order = ['status', 'success', 'result', 'error', 'stdout', 'stderr', 'exitCode', 'usage', 'truncated', 'files', 'sync', 'events'];
  const out: Record<string, unknown> = {};
  for (const key of order) if (key in result) out[key] = result[key];
  for (const key of Object.keys(result)) if (!(key in out)) out[key] = result[key];
  return out as ExecutionResult;
}

export class SandboxExecutor extends SeedEventEmitter {
  /** `local` (fnbox call) or `remote` (fnbox serve). */
  readonly mode: 'local' | 'remote';
  readonly #transport: Transport;
  readonly #defaultWorkdir: string | undefined;
  readonly #allowAbort: boolean;
  readonly #cwd: string | undefined;

  constructor(options: ExecutorOptions = {}) {
    super();
    this.#defaultWorkdir = options.defaultWorkdir;
    /* The seed: without syncEventConfig aborts are allowed; with it, only when it says so. */
    this.#allowAbort = options.syncEventConfig ? options.syncEventConfig.allowAbort === true : true;
    this.#cwd = options.cwd;
    if (options.baseUrl !== undefined) {
      this.mode = 'remote';
      this.#transport = new RemoteTransport(options.baseUrl, options.token);
    } else {
      this.mode = 'local';
      this.#transport = new LocalTransport(options.binary, options.cwd, options.environments);
    }
  }

  /**
   * Runs one function call. Resolves with fnbox's result whatever the function did (`status` says:
   * `success`, `error`, `crash`, `timeout`, `terminated`; an invalid request is an `error` result of type
   * `InvalidRequest` naming the field). Rejects with a `FnboxError` only when no result came (fnbox not
   * found, the server unreachable or refusing: `Unauthorized`, `Overloaded`; `Cancelled` after `signal`).
   */
  async execute<T = unknown>(request: FunctionCallRequest, options: ExecuteOptions = {}): Promise<ExecutionResult<T>> {
    const prepared = prepareRequest(request, this.#defaultWorkdir);
    const mount = getMount(prepared);
    let result: ExecutionResult;
    if (mount && mount.sync?.mode === 'batch' && this.listenerCount('beforeSync') > 0) {
      result = await this.#executeAsking(prepared, mount, options);
    } else {
      result = await this.#transport.call(prepared, options);
      const received = new Date();
      if (result.files) {
        presentFiles(result.files as unknown as Record<string, unknown>, received);
        addSummaryMethods(result.files);
      }
      this.#emitEvents(result, result.events ?? [], received);
    }
    return result as ExecutionResult<T>;
  }

  /**
   * Writes the given changes (e.g. `result.files.created`, filtered) to the mount's host directories:
   * `fnbox sync`, with batch sync's atomic, beneath-the-mount-only writes. A mount without `permissions`
   * applies every change given; one with `permissions` is checked against them. Changes in the seed's own
   * shape (as `result.files` lists them: `type: 'create' | 'modify' | 'delete'`, `Uint8Array` content) and
   * fnbox's wire form (`WireFileChange`) are both accepted.
   */
  async syncFiles(
    changes: Array<FileChange | WireFileChange> | Partial<Pick<FileChangeSummary, Kind>>,
    mount: MountConfig,
    options: SyncFilesOptions = {},
  ): Promise<SyncResult> {
    const list = Array.isArray(changes)
      ? changes.map((c) => toSyncChange(c))
      : KINDS.flatMap((kind) =>
          ((changes as Record<string, unknown[] | undefined>)[kind] ?? []).map((c) => ({ ...(toSyncChange(c) as Record<string, unknown>), kind })),
        );
    const report = await this.#transport.sync({ changes: list, mount, onError: options.onError ?? 'continue' }, options.signal);
    return toSyncResult(report);
  }

  /** Closes remote mode's idle kept-alive connections (they never keep the process alive). */
  close(): void {
    this.#transport.close();
  }

  /* ---------------- events from a result ---------------- */

  /** The change a result reports at a path (the seed's shape), with its host path, for the event handlers. */
  #changeFor(result: ExecutionResult, ev: ResultEvent, received: Date): FileChange {
    const kind = ev.change ?? 'modified';
    const found = result.files?.[kind]?.find((c) => c.path === ev.path);
    /* not listed (includeChanges: false): what the event says of it */
    const base: FileChange = found ? { ...found } : toSeedChange({ path: ev.path, type: ev.fileType ?? 'file' }, kind, received);
    return { ...base, ...(ev.realPath ? { realPath: ev.realPath } : {}) };
  }

  /** Raises `permissionDenied`, `afterSync` and `syncError` for the result's events (beforeSync was asked already, if at all). */
  #emitEvents(result: ExecutionResult, events: ResultEvent[], received: Date, skipPermissionDenied = false): void {
    const errors = new Map<string, Error>();
    const errorFor = (ev: ResultEvent): Error => {
      let err = errors.get(ev.path);
      if (!err) {
        err = new FnboxError('SyncFailed', ev.error ?? 'sync failed');
        errors.set(ev.path, err);
      }
      return err;
    };
    for (const ev of events) {
      if (ev.type === 'permissionDenied') {
        if (skipPermissionDenied) continue;
        const { type: _t, ...record } = ev;
        this.emit('permissionDenied', record as PermissionDeniedRecord);
      } else if (ev.type === 'afterSync') {
        const data: AfterSyncEventData = { ...this.#changeFor(result, ev, received), success: ev.success === true };
        if (ev.success !== true) data.error = errorFor(ev);
        this.emit('afterSync', data);
      } else if (ev.type === 'syncError') {
        this.emit('syncError', this.#changeFor(result, ev, received), errorFor(ev));
      }
    }
  }

  /* ---------------- batch sync with beforeSync handlers ---------------- */

  #realPath(mount: MountConfig, root: string, rel: string): string | undefined {
    const host = mount.dirs[root];
    if (typeof host !== 'string') return undefined;
    let hostRoot: string;
    if (isAbsolute(host)) hostRoot = host;
    else if (this.mode === 'local') hostRoot = resolve(this.#cwd ?? process.cwd(), host);
    else return undefined; /* relative to the server's directory, which is not known here */
    return rel ? join(hostRoot, rel) : hostRoot;
  }

  /** The mount a virtual path is in (whole components: `/data` holds `/data/x`, never `/database`). */
  #locate(mount: MountConfig, path: string): { root: string; rel: string } | undefined {
    let best: { root: string; rel: string } | undefined;
    for (const root of Object.keys(mount.dirs ?? {})) {
      const r = root.length > 1 ? root.replace(/\/+$/, '') : root;
      let rel: string | undefined;
      if (path === r) rel = '';
      else if (path.startsWith(r === '/' ? '/' : `${r}/`)) rel = path.slice(r === '/' ? 1 : r.length + 1);
      if (rel !== undefined && (!best || r.length > best.root.length)) best = { root, rel };
    }
    return best;
  }

  async #executeAsking(prepared: Record<string, unknown>, mount: MountConfig, options: ExecuteOptions): Promise<ExecutionResult> {
    const reporting = getReporting(prepared);
    const onError = mount.sync?.onError;
    /* A batch mount without permissions may only read and list (unless a preset allows all): say so
       explicitly, since the call now runs as manual, where an absent section allows everything. */
    const syncMount: MountConfig = { ...mount };
    if (mount.permissions === undefined && !presetAllowsAllFs(getPermissions(prepared))) {
      syncMount.permissions = { default: { read: true, list: true, create: false, modify: false, delete: false } };
    }
    let request = withMount(prepared, { ...syncMount, sync: { ...mount.sync, mode: 'manual' } });
    request = withReporting(request, { ...reporting, includeChanges: true, includeContents: true });
    const result = await this.#transport.call(request, options);
    const received = new Date();
    const events: ResultEvent[] = [...(result.events ?? [])];
    this.#emitEvents(result, events, received);

    const files = result.files;
    const callOk = result.status === 'success' || mount.sync?.onFunctionError === 'sync';
    const items: Item[] = [];
    if (files && callOk) {
      for (const kind of KINDS) {
        /* still fnbox's wire form: presentFiles turns the lists into the seed's at the end */
        for (const change of (files[kind] ?? []) as unknown as WireFileChange[]) {
          const where = this.#locate(mount, change.path);
          if (!where) continue; /* scratch space: never synced, not in the report */
          items.push({
            change,
            seed: toSeedChange(change, kind, received),
            kind,
            idx: 0,
            askable: where.rel !== '',
            realPath: this.#realPath(mount, where.root, where.rel),
          });
        }
      }
    }
    items.sort((a, b) => (a.change.path < b.change.path ? -1 : a.change.path > b.change.path ? 1 : 0));
    items.forEach((it, i) => (it.idx = i));

    if (items.length > 0) {
      const order = [...items].sort(syncOrder);
      const asked = new Set<Item>();
      const skippedBy = new Map<Item, string | undefined>();
      const accepted: Item[] = [];
      let aborted: Item | undefined;
      for (const it of order) {
        if (!it.askable) {
          accepted.push(it); /* fnbox sync says why it is not written */
          continue;
        }
        asked.add(it);
        const change: FileChange = { ...it.seed, ...(it.realPath ? { realPath: it.realPath } : {}) };
        const answer = (await this.emitAsync('beforeSync', change)) as BeforeSyncEventResult | undefined;
        if (answer?.state === 'skip') {
          skippedBy.set(it, answer.reason);
          continue;
        }
        if (answer?.state === 'abort' && this.#allowAbort) {
          aborted = it;
          break;
        }
        accepted.push(it); /* continue, no answer, or an abort that is not allowed (the seed syncs it) */
      }
      /* Under rollback an abort keeps nothing (fnbox and the seed undo what was written before it). */
      const keepNothing = aborted !== undefined && (onError ?? 'rollback') === 'rollback';
      const toSync = keepNothing ? [] : accepted;
      let report: SyncReport | undefined;
      if (toSync.length > 0) {
        report = await this.#transport.sync(
          { changes: toSync.map((it) => ({ ...it.change, kind: it.kind })), mount: syncMount, onError },
          options.signal,
        );
      }
      const fromReport = new Map<string, SyncDetail[]>();
      for (const d of report?.details ?? []) fromReport.set(d.path, [...(fromReport.get(d.path) ?? []), d]);
      const sent = new Set(toSync);
      const afterAbort = new Set(aborted ? order.slice(order.indexOf(aborted)) : []);
      const detailOf = new Map<Item, SyncDetail>();
      for (const it of items) {
        let d: SyncDetail | undefined;
        if (sent.has(it)) d = fromReport.get(it.change.path)?.shift();
        if (!d) {
          const base = { path: it.change.path, realPath: it.realPath ?? null, type: it.change.type, kind: it.kind } as unknown as SyncDetail;
          if (skippedBy.has(it)) {
            const why = skippedBy.get(it);
            d = { ...base, status: 'skipped', reason: why ? `skipped by beforeSync: ${why}` : 'skipped by beforeSync' };
          } else if (it === aborted) {
            d = { ...base, status: 'notAttempted', reason: 'sync aborted by beforeSync' };
          } else if (afterAbort.has(it)) {
            d = { ...base, status: 'notAttempted', reason: 'not attempted: the sync was aborted by beforeSync' };
          } else {
            d = { ...base, status: 'notAttempted', reason: 'not attempted: the sync was aborted by beforeSync under onError "rollback", which keeps nothing' };
          }
        }
        detailOf.set(it, d);
      }
      const rollbackFailed = report !== undefined && !report.success && report.failed.length === 0;
      result.sync = renderReport(
        items.map((it) => detailOf.get(it)!),
        report?.onError ?? onError ?? 'rollback',
        report?.rolledBack ?? false,
        rollbackFailed,
      );
      /* The events in the order fnbox's own batch sync lists them: per change, beforeSync then afterSync (+ syncError). */
      const syncEvents: ResultEvent[] = [];
      for (const it of order) {
        const d = detailOf.get(it)!;
        const realPath = d.realPath ?? it.realPath;
        const common = { path: it.change.path, ...(realPath ? { realPath } : {}), change: it.kind, fileType: it.change.type };
        if (asked.has(it)) syncEvents.push({ type: 'beforeSync', ...common });
        const attempted = d.status === 'synced' || d.status === 'failed' || d.status === 'rolledBack';
        if (!attempted) continue;
        const failed = d.status === 'failed';
        syncEvents.push({ type: 'afterSync', ...common, success: !failed, ...(failed ? { error: d.error ?? '' } : {}) });
        if (failed) syncEvents.push({ type: 'syncError', ...common, error: d.error ?? '' });
      }
      result.events = [...events, ...syncEvents];
    }

    /* What the caller asked to see. */
    if (files) {
      if (reporting.includeContents === false) {
        for (const kind of KINDS) for (const c of files[kind] ?? []) delete c.content;
      }
      if (reporting.includeChanges === false) delete result.files;
      else {
        presentFiles(files as unknown as Record<string, unknown>, received);
        addSummaryMethods(files);
      }
    }
    const final = ordered(result);
    this.#emitEvents(final, (final.events ?? []).slice(events.length), received, true);
    return final;
  }
}

/** fnbox's sync report as the seed's `SyncResult` (the whole report stays reachable as `report`). */
export function toSyncResult(report: SyncReport): SyncResult {
  const out: SyncResult = {
    synced: [...report.synced],
    failed: report.failed.map((f) => ({ path: f.path, error: new FnboxError('SyncFailed', f.error) })),
    skipped: report.skipped.map((s) => s.path),
  };
  Object.defineProperty(out, 'report', { value: report, enumerable: false, configurable: true });
  return out;
}

/** A new executor (the seed's `createExecutor`). Never throws: a missing fnbox is reported by the first call. */
export function createExecutor(options?: ExecutorOptions): SandboxExecutor {
  return new SandboxExecutor(options);
}
