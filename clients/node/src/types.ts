/**
 * The request, result, mount and event types of `@isdk/sandbox-executor` (v0.1 flat and v0.2 nested
 * request shapes), as fnbox reads and writes them, so typed code written for the seed compiles against
 * `fnbox` unchanged. Where fnbox's JSON differs from the seed's in-memory objects (file contents travel
 * as text or `{base64}`, a change's `type` is the entry's file type), the types say what actually arrives.
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

/** v0.2's `options`. */
export interface InvokeOptions {
  mount?: MountConfig;
  files?: Record<string, FileContent>;
  workdir?: string;
  reporting?: ReportingOptions;
  permissions?: unknown;
  limits?: Record<string, number>;
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

/** One changed entry, as fnbox reports it. */
export interface FileChange {
  /** Virtual path in the sandbox. */
  path: string;
  /** fnbox: the entry's type (`file`, `directory`, `symlink`). The seed's `create|modify|delete` is `kind`. */
  type: string;
  size?: number;
  /** Text as a string, binary as `{base64}` (absent with `includeContents: false` and for deletions). */
  content?: string | { base64: string };
  mode?: number;
  /** `created`, `modified` or `deleted`: set on the changes this package hands to events and sync. */
  kind?: 'created' | 'modified' | 'deleted';
  /** The host path, where known. */
  realPath?: string;
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

export interface AfterSyncEventData extends FileChange {
  success: boolean;
  error?: Error;
}

export interface SyncEventConfig {
  /** Whether a `beforeSync` answer of `ABORT` stops the whole sync (default true when `syncEventConfig` is absent). */
  allowAbort?: boolean;
}
