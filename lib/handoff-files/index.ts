// v0.1 file-based handoffs (the `.handoffs/` protocol): read and write them
// exactly, without lost updates or double accepts among Baton writers; watch
// directories live; keep a history Baton's own store gives each handoff; and
// bridge a directory to MACP Task-mode sessions (./bridge). See README.md in
// this folder for what is and is not guaranteed.

export {
  HANDOFF_SCHEMA,
  HANDOFF_STATUSES,
  FIELD_ORDER,
  checkDocument,
  isHandoffStatus,
  isoToMs,
  parseHandoffBytes,
  serializeDocument,
  toDocument,
  type HandoffRecord,
  type HandoffStatus,
  type JsonObject,
  type JsonValue,
  type Problem,
  type ProblemCode,
} from "./record";
export {
  ACTION_TARGET,
  TRANSITIONS,
  applyAction,
  canTransition,
  classifyStep,
  describeStep,
  isFinal,
  newOffer,
  refusalFor,
  type ActionKind,
  type ContextPatch,
  type HandoffAction,
  type OfferInput,
  type StepKind,
} from "./state-machine";
export { HandoffError, USAGE_KINDS, type HandoffErrorKind } from "./errors";
export { isHandoffFileName, readSnapshot, type InvalidSnapshot, type Snapshot, type ValidSnapshot } from "./snapshot";
export { acquireLock, lockPathFor, HeldLock, type LockOptions } from "./lock";
export { DIRECTORY_DEFAULTS, HandoffDirectory, type HandoffDirectoryOptions, type WriteResult } from "./directory";
export type { ListResult } from "./directory-search";
export {
  DEFAULT_HANDOFF_DIR,
  HISTORY_FILE_NAME,
  cliHandoffDir,
  dataDirFromEnv,
  handoffDirsFromEnv,
  handoffSettingsFromEnv,
  historyFileFromEnv,
  type Env,
  type HandoffSettings,
  type WatchMode,
} from "./config";
export {
  HISTORY_CONTENT_LIMIT,
  observedStep,
  type HandoffHistoryStore,
  type HandoffSummary,
  type HistoryEntry,
  type LastRecorded,
  type ListQuery,
  type Observation,
  type ObservationSource,
  type ObservedStep,
  type Page,
} from "./history";
export { SqliteHistoryStore, type SqliteHistoryOptions } from "./history-sqlite";
export {
  HandoffWatcher,
  isNetworkFilesystem,
  type ChangeListener,
  type DirectoryStatus,
  type HandoffChange,
  type WatcherOptions,
} from "./watch";
