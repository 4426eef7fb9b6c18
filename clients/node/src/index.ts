/**
 * `fnbox`: the client of fnbox, a secure multi-language function executor.
 *
 * `import { createExecutor, SyncStates } from 'fnbox'` is a drop-in for `@isdk/sandbox-executor`: the
 * same request and result shapes (v0.1 and v0.2), `execute`, `syncFiles` and the sync events, with each
 * call run by fnbox (locally, `fnbox call`; or on a `fnbox serve` given by `baseUrl`).
 * The Strands Agents sandbox is `import { FnboxSandbox } from 'fnbox/strands'`.
 */
export { FnboxError } from './errors.js';
export {
  SandboxExecutor,
  createExecutor,
  toSyncResult,
  type ExecutorOptions,
  type ExecuteOptions,
  type SyncFilesOptions,
} from './executor.js';
export { EventObject, SeedEventEmitter, type Listener } from './executor/events.js';
export { ALL_PERMISSIONS, SyncStates } from './types.js';
export type {
  AfterSyncEventData,
  ArgsMode,
  ArgumentItem,
  BeforeSyncEventResult,
  Dependencies,
  DependencyLayerMeta,
  ExecutionError,
  ExecutionMeta,
  ExecutionResult,
  ExecutionStatus,
  FileChange,
  FileChangeSummary,
  FileContent,
  FunctionCallRequest,
  FunctionSchema,
  InputSchema,
  InvokeOptions,
  JsonSchema,
  LoadingConfig,
  LoadingMode,
  MountConfig,
  ParamSchema,
  Permission,
  PermissionConfig,
  PermissionDeniedBehavior,
  PermissionDeniedRecord,
  PermissionRule,
  PermissionSet,
  ReportingOptions,
  ResultEvent,
  ResultOptions,
  SecurityConfig,
  SupportedLanguage,
  SymlinkBehavior,
  SyncConfig,
  SyncDetail,
  SyncErrorBehavior,
  SyncEventConfig,
  SyncMode,
  SyncReport,
  SyncResult,
  SyncState,
  WireFileChange,
} from './types.js';
