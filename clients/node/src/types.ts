/**
 * The request, result, mount and event types of `@isdk/sandbox-executor` (v0.1 flat and v0.2 nested
 * request shapes), as fnbox reads and writes them, so typed code written for the seed compiles against
 * `fnbox` unchanged. A result's changes are the seed's `FileChange` objects (`type` `create|modify|delete`,
 * `Uint8Array` content); fnbox's wire form of them, which `fnbox sync` reads, is `WireFileChange`.
 */

/* ---------- languages, statuses ---------- */

/** The seed's languages plus fnbox's aliases (see README "Languages"). */
export type SupportedLanguage =
  | 'python'
  | 'py'
  | 'python3'
  | 'ruby'
  | 'rb'
  | 'quickjs'
  | 'js'
  | 'javascript'
  | 'node'
  | 'nodejs'
  | 'php'
  | 'c'
  | 'cpp'
  | 'c++'
  | 'cxx'
  | 'clang'
  | 'clangpp'
  | (string & {});

export type ExecutionStatus = 'success' | 'error' | 'crash' | 'timeout' | 'terminated';

/* ---------- permissions and mounts ---------- */

export const ALL_PERMISSIONS = ['read', 'list', 'create', 'modify', 'delete'] as const;
export type Permission = (typeof ALL_PERMISSIONS)[number];

export interface PermissionSet {
  read?: boolean;
  list?: boolean;
  create?: boolean;
  modify?: boolean;
  delete?: boolean;
}

export interface PermissionRule {
  /** A minimatch glob against the path relative to the mount (`output/**`), or the full virtual path (`/data/x`). */
  pattern: string;
  allow?: Permission[] | '*';
  deny?: Permission[] | '*';
  /** Higher is tried first. */
  priority?: number;
}

export interface PermissionConfig {
  default?: PermissionSet;
  rules?: PermissionRule[];
  /** Not loaded: absent inside the sandbox, at any depth. */
  exclude?: string[];
}

export type LoadingMode = 'eager' | 'lazy' | 'explicit';
export type SyncMode = 'batch' | 'manual';
export type SyncErrorBehavior = 'rollback' | 'continue' | 'abort';
export type SymlinkBehavior = boolean | 'restricted';
export type PermissionDeniedBehavior = 'throw' | 'ignore' | 'virtual';

export interface LoadingConfig {
  mode: LoadingMode;
  include?: string[];
  maxFileSize?: number;
  maxTotalSize?: number;
}

export interface SyncConfig {
  /** `batch` writes the permitted changes to the host after the call; absent or `manual`: only reported. */
  mode?: SyncMode;
  /** fnbox's default is `rollback`. */
  onError?: SyncErrorBehavior;
  /** fnbox: `sync` also syncs after a call that ended in error, crash or timeout (default `skip`). */
  onFunctionError?: 'skip' | 'sync';
}

export interface SecurityConfig {
  followSymlinks?: SymlinkBehavior;
}

export interface MountConfig {
  /** Virtual path -> host directory (relative host paths resolve against fnbox's working directory). */
  dirs: Record<string, string>;
  permissions?: PermissionConfig;
  loading?: LoadingConfig;
  sync?: SyncConfig;
  security?: SecurityConfig;
  onPermissionDenied?: PermissionDeniedBehavior;
}

/* ---------- the request ---------- */

/** @deprecated in the seed (v0.2 uses `FunctionSchema.input`); fnbox accepts both. */
export interface ParamSchema {
  name: string;
  type?: string | string[];
  required?: boolean;
  default?: unknown;
  description?: string;
  nullable?: boolean;
}

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  required?: boolean;
  [key: string]: unknown;
}

export type InputSchema = JsonSchema[] | Record<string, JsonSchema & { index?: number }>;

export interface FunctionSchema {
  /** v0.1 */
  params?: ParamSchema[];
  /** v0.2 */
  input?: InputSchema;
  output?: JsonSchema;
  strict?: boolean;
  variadic?: boolean;
  acceptsKwargs?: boolean;
  description?: string;
}

export interface ResultOptions {
  /** Default true: `files` lists what changed. */
  includeChanges?: boolean;
  /** Default true: each change carries its content. */
  includeContents?: boolean;
  /** Default true: `files.denied` and the `permissionDenied` events. */
  includeDenied?: boolean;
}
/** v0.2's name for `ResultOptions`. */
export type ReportingOptions = ResultOptions;

/** A virtual file's content: text, bytes (sent as `{base64}`), or `{base64}` itself. */
export type FileContent = string | Uint8Array | { base64: string };

/**
 * fnbox: packages a call, an execute request or a session names, per ecosystem: pip requirements
 * (`six==1.16.0`, `pkg>=1,<2`) and npm specs (`left-pad@1.3.0`, `@scope/x@^1.2.0`). fnbox installs each list
 * once from the environment's configured index (`indexes.python` / `indexes.npm` of the environments file; the
 * host's come from its entry named `host`) into a cached read-only layer on the language's search path.
 * Without an index, or with an entry that is not a plain name and version (an option, a URL, a path, shell
 * characters): `InvalidRequest` naming `dependencies`; a failed install: `DependencyInstallFailed`.
 */
export interface Dependencies {
  python?: string[];
  javascript?: string[];
}

/** fnbox: `meta.dependencies[ecosystem]` of a result: the layer used and whether it was already built. */
export interface DependencyLayerMeta {
  /** The layer's content key (never a host path). */
  layer: string;
  /** `hit`: already built (or built by a concurrent request this one waited for); `miss`: installed now. */
  cache: 'hit' | 'miss';
  /** What this request spent on the layer: the lookup, a wait, or the install. */
  installMs: number;
}

/** v0.2's `options`. */
export interface InvokeOptions {
  mount?: MountConfig;
  files?: Record<string, FileContent>;
  workdir?: string;
  reporting?: ReportingOptions;
  permissions?: unknown;
  limits?: Record<string, number>;
  /** fnbox: a named environment of the server's (`--environments FILE`); without it, the host's. */
  environment?: string;
  /** fnbox: packages installed for this call (see `Dependencies`). */
  dependencies?: Dependencies;
  [key: string]: unknown;
}

export type ArgsMode = 'stdin' | 'inline' | 'file' | 'auto';
/** A positional value, or (object-form `args`) `{index, value}`. */
export type ArgumentItem = unknown;

/** One call: the seed's flat v0.1 shape or its nested v0.2 shape (`options`, `reporting`, object `args`). */
export interface FunctionCallRequest {
  language: SupportedLanguage;
  code: string;
  /** Optional in fnbox: the only top-level function is called, or the code runs as a body. */
  functionName?: string;
  args?: ArgumentItem[] | Record<string, ArgumentItem>;
  kwargs?: Record<string, unknown>;
  schema?: FunctionSchema;
  /** Seconds (fractions allowed); default 30, at most 3600. */
  timeout?: number;
  argsMode?: ArgsMode;
  /** v0.1 */
  mount?: MountConfig;
  /** v0.1 */
  files?: Record<string, FileContent>;
  /** v0.1 */
  workdir?: string;
  /** v0.1 */
  resultOptions?: ResultOptions;
  /** v0.2 */
  options?: InvokeOptions;
  /** fnbox: env, childProcess, network, presets (README "Permissions"). */
  permissions?: unknown;
  /** fnbox: per-call limits (README "Limits"). */
  limits?: Record<string, number>;
  /** fnbox: the named environment to run in (the server's or `environments` file's `--environments`);
   * without it, the host's. An unknown name is an `InvalidRequest` naming `environment`. */
  environment?: string;
  /** fnbox: packages installed for this call (see `Dependencies`); also accepted in `options`. */
  dependencies?: Dependencies;
  [key: string]: unknown;
}

/* ---------- the result ---------- */

export interface ExecutionError {
  message: string;
  /** The language's own class (`ZeroDivisionError`) or fnbox's (`InvalidRequest`, `TimeoutError`, ...). */
  type?: string;
  stack?: string;
  /** fnbox: which limit was hit (`timeout`, `memoryBytes`, ...). */
  limit?: string;
  reason?: string;
}

/**
 * One changed entry as the drop-in hands it over (`result.files.*[]`, the sync events): the seed's
 * `FileChange`. fnbox's own fields ride along (`fileType`, `mode`; `realPath` on what the events receive).
 */
export interface FileChange {
  /** What happened to the entry, as the seed says it. */
  type: 'create' | 'modify' | 'delete';
  /** Virtual path in the sandbox. */
  path: string;
  /** The new bytes (text as UTF-8). Absent for a deletion, a directory, and with `includeContents: false`. */
  content?: Uint8Array;
  /** The seed's previous bytes of a modified file: fnbox never reports them (always absent). */
  oldContent?: Uint8Array;
  /** Bytes now: the content's length; 0 for a deletion and a directory. */
  size: number;
  /** When the client received the result (fnbox does not time each change). */
  timestamp: Date;
  /** fnbox: the entry's type, which the seed has no field for (its entries are all files). */
  fileType: 'file' | 'directory' | 'symlink';
  /** fnbox: the entry's permission bits, where reported. */
  mode?: number;
  /** The host path (the events' changes, where known). */
  realPath?: string;
  [key: string]: unknown;
}

/**
 * One changed entry in fnbox's wire form: as `fnbox call` and `POST /v1/execute` print it under
 * `files.created|modified|deleted`, and as `fnbox sync` / `syncFiles` read it.
 */
export interface WireFileChange {
  path: string;
  /** The entry's type. */
  type: 'file' | 'directory' | 'symlink' | (string & {});
  size?: number;
  /** Text as a string, binary as `{base64}` (absent with `includeContents: false` and for deletions). */
  content?: string | { base64: string };
  mode?: number;
  /** `fnbox sync`: which list the change is from, when it is given alone. */
  kind?: 'created' | 'modified' | 'deleted';
  [key: string]: unknown;
}

export interface PermissionDeniedRecord {
  path: string;
  /** `read`, `list`, `create`, `modify`, `delete`. */
  operation: string;
  /** The rule that decided: `default`, `rules[1] "output/**"`, `exclude "node_modules"`. */
  rule?: string;
  [key: string]: unknown;
}

export interface FileChangeSummary {
  created: FileChange[];
  modified: FileChange[];
  deleted: FileChange[];
  denied: PermissionDeniedRecord[];
  /** Host files the loading limits or link policy left out. */
  skipped?: unknown[];
  /** True when anything was created, modified or deleted (not enumerable: JSON is unchanged). */
  hasChanges(): boolean;
  /** created, modified and deleted in one list (not enumerable). */
  all(): FileChange[];
  /** The change at a virtual path (not enumerable). */
  byPath(path: string): FileChange | undefined;
}

export interface ExecutionMeta {
  duration: number;
  signatureSource?: 'schema' | 'inferred' | 'convention';
  /** fnbox: the request's dependency layers, per ecosystem (present when it named `dependencies`). */
  dependencies?: { python?: DependencyLayerMeta; javascript?: DependencyLayerMeta };
  [key: string]: unknown;
}

/** fnbox's sync report (`fnbox sync`, `POST /v1/sync`, a batch call's `sync`). */
export interface SyncReport {
  success: boolean;
  synced: string[];
  failed: Array<{ path: string; error: string }>;
  skipped: Array<{ path: string; reason?: string; rule?: string; operation?: string }>;
  notAttempted: Array<string | { path: string; reason?: string }>;
  rolledBack: boolean;
  undone: string[];
  onError: SyncErrorBehavior;
  details: SyncDetail[];
  deniedByPermissions: number;
  message: string;
  error?: { type: string; message: string };
  [key: string]: unknown;
}

export interface SyncDetail {
  path: string;
  realPath?: string;
  type?: string;
  kind?: 'created' | 'modified' | 'deleted';
  status: 'synced' | 'failed' | 'skipped' | 'notAttempted' | 'rolledBack';
  operation?: string;
  error?: string;
  reason?: string;
  rule?: string;
}

/** One entry of the result's ordered `events` list. */
export interface ResultEvent {
  type: 'permissionDenied' | 'beforeSync' | 'afterSync' | 'syncError' | (string & {});
  path: string;
  realPath?: string;
  change?: 'created' | 'modified' | 'deleted';
  fileType?: string;
  success?: boolean;
  error?: string;
  operation?: string;
  rule?: string;
  [key: string]: unknown;
}

export interface ExecutionResult<T = unknown> {
  status: ExecutionStatus;
  success: boolean;
  result?: T;
  error?: ExecutionError;
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Absent with `includeChanges: false`. */
  files?: FileChangeSummary;
  meta?: ExecutionMeta;
  /** fnbox: `{wallMs, cpuMs, peakMemoryBytes}`. */
  usage?: { wallMs: number; cpuMs: number; peakMemoryBytes: number; [key: string]: unknown };
  /** fnbox: whether stdout / stderr were cut at their limit. */
  truncated?: { stdout: boolean; stderr: boolean };
  /** fnbox: the batch sync's report. */
  sync?: SyncReport;
  /** fnbox: the ordered sync and permission events. */
  events?: ResultEvent[];
  [key: string]: unknown;
}

/** The seed's `syncFiles()` answer; fnbox's whole report is `report` (not enumerable). */
export interface SyncResult {
  /** Paths written to the host. */
  synced: string[];
  /** Paths that failed, each with an Error (a `FnboxError` of type `SyncFailed`). */
  failed: Array<{ path: string; error: Error }>;
  /** Paths not written by policy (rules, a `beforeSync` answer, outside every mount) or not attempted. */
  skipped: string[];
  /** fnbox's own report: reasons, rules, `notAttempted`, `rolledBack`, `message`. */
  readonly report?: SyncReport;
}

/* ---------- events ---------- */

export const SyncStates = {
  CONTINUE: 'continue',
  SKIP: 'skip',
  ABORT: 'abort',
} as const;
export type SyncState = (typeof SyncStates)[keyof typeof SyncStates];

export interface BeforeSyncEventResult {
  state: SyncState;
  reason?: string;
}

/** `afterSync`'s argument: the change, its host path, and how its write went (the seed's). */
export interface AfterSyncEventData extends FileChange {
  success: boolean;
  error?: Error;
}

export interface SyncEventConfig {
  /** Whether a `beforeSync` answer of `ABORT` stops the whole sync (default true when `syncEventConfig` is absent). */
  allowAbort?: boolean;
}
