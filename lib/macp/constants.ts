// Protocol-wide constants shared by the runtime, the gateway, the CLI and the
// browser. Pure data: no I/O, no imports beyond types.

export const MACP_VERSION = "1.0";
export const MODE_VERSION = "1.0.0";
export const DEFAULT_POLICY_ID = "policy.default";
export const DEFAULT_CONFIGURATION_VERSION = "config.default";
export const RUNTIME_SENDER = "_runtime";
/** SessionStart extension where Baton keeps the scope typed at start (the default scope of offers). */
export const SCOPE_EXTENSION = "baton.scope";
export const MAX_TTL_MS = 86_400_000;
export const MAX_PARTICIPANTS = 1000;

export const HANDOFF_MODE = "macp.mode.handoff.v1";
export const TASK_MODE = "macp.mode.task.v1";
export const DECISION_MODE = "macp.mode.decision.v1";
export const PROPOSAL_MODE = "macp.mode.proposal.v1";
export const QUORUM_MODE = "macp.mode.quorum.v1";

/**
 * Not an MACP mode: the mode value of v0.1 file handoffs in the console's
 * session list (lib/gateway/catalog/file-rows.ts), so they sort, filter
 * (`?mode=file`) and search beside the sessions. Never sent to a runtime.
 */
export const FILE_HANDOFF_MODE = "v0.1.file";

/** Modes Baton's runtime implements. */
export const IMPLEMENTED_MODES = [HANDOFF_MODE, TASK_MODE] as const;
export type ImplementedMode = (typeof IMPLEMENTED_MODES)[number];

export const CORE_TYPES = {
  SessionStart: "SessionStart",
  Commitment: "Commitment",
  Signal: "Signal",
  Progress: "Progress",
  SessionCancel: "SessionCancel",
  SessionSuspend: "SessionSuspend",
  SessionResume: "SessionResume",
  /** Runtime-internal marker written when a TTL elapses; never broadcast. */
  TtlExpired: "TtlExpired",
} as const;

export const HANDOFF_TYPES = {
  Offer: "HandoffOffer",
  Context: "HandoffContext",
  Accept: "HandoffAccept",
  Decline: "HandoffDecline",
} as const;

export const TASK_TYPES = {
  Request: "TaskRequest",
  Accept: "TaskAccept",
  Reject: "TaskReject",
  Update: "TaskUpdate",
  Complete: "TaskComplete",
  Fail: "TaskFail",
} as const;

/** Error codes from the MACP registry (PROTOCOL.md §7). */
export const ERROR_CODES = [
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "SESSION_NOT_FOUND",
  "SESSION_NOT_OPEN",
  "DUPLICATE_MESSAGE",
  "SESSION_ALREADY_EXISTS",
  "INVALID_ENVELOPE",
  "UNSUPPORTED_PROTOCOL_VERSION",
  "MODE_NOT_SUPPORTED",
  "PAYLOAD_TOO_LARGE",
  "RATE_LIMITED",
  "INVALID_SESSION_ID",
  "INTERNAL_ERROR",
  "UNKNOWN_POLICY_VERSION",
  "POLICY_DENIED",
  "INVALID_POLICY_DEFINITION",
] as const;
export type MacpErrorCode = (typeof ERROR_CODES)[number];

/** Plain-language explanation of each code, for people reading a rejection. */
export const ERROR_EXPLANATIONS: Record<MacpErrorCode, string> = {
  UNAUTHENTICATED: "The runtime could not tell who sent this, or the sender does not match the signed-in identity.",
  FORBIDDEN: "This participant is not allowed to send that message at this point.",
  SESSION_NOT_FOUND: "No session with that id exists on the runtime.",
  SESSION_NOT_OPEN: "The session is no longer open (resolved, expired, cancelled or suspended).",
  DUPLICATE_MESSAGE: "This message was already accepted.",
  SESSION_ALREADY_EXISTS: "A session with that id already exists.",
  INVALID_ENVELOPE: "The message breaks a protocol rule for this session's current state.",
  UNSUPPORTED_PROTOCOL_VERSION: "The message uses a protocol version the runtime does not speak.",
  MODE_NOT_SUPPORTED: "The runtime does not implement that coordination mode.",
  PAYLOAD_TOO_LARGE: "The payload is larger than the runtime accepts.",
  RATE_LIMITED: "Too many messages from this identity; wait a moment and retry.",
  INVALID_SESSION_ID: "The session id is not a lowercase UUID v4/v7 or a 22+ character base64url string.",
  INTERNAL_ERROR: "The runtime failed to store the message; it was not accepted. Retrying is safe.",
  UNKNOWN_POLICY_VERSION: "The policy named by the session is not registered.",
  POLICY_DENIED: "The session's governance policy does not allow this.",
  INVALID_POLICY_DEFINITION: "The policy does not apply to this mode or is malformed.",
};

/** Reference runtimes report some errors by display name; map them to codes. */
export const ERROR_NAME_TO_CODE: Record<string, MacpErrorCode> = {
  InvalidMacpVersion: "UNSUPPORTED_PROTOCOL_VERSION",
  InvalidEnvelope: "INVALID_ENVELOPE",
  InvalidPayload: "INVALID_ENVELOPE",
  InvalidTtl: "INVALID_ENVELOPE",
  InvalidModeState: "INVALID_ENVELOPE",
  UnknownSession: "SESSION_NOT_FOUND",
  SessionNotOpen: "SESSION_NOT_OPEN",
  TtlExpired: "SESSION_NOT_OPEN",
  UnknownMode: "MODE_NOT_SUPPORTED",
  SessionAlreadyExists: "SESSION_ALREADY_EXISTS",
  Forbidden: "FORBIDDEN",
  Unauthenticated: "UNAUTHENTICATED",
  PayloadTooLarge: "PAYLOAD_TOO_LARGE",
  RateLimited: "RATE_LIMITED",
  StorageFailed: "INTERNAL_ERROR",
  InvalidSessionId: "INVALID_SESSION_ID",
  UnknownPolicyVersion: "UNKNOWN_POLICY_VERSION",
  PolicyDenied: "POLICY_DENIED",
  InvalidPolicyDefinition: "INVALID_POLICY_DEFINITION",
  UNAUTHORIZED: "FORBIDDEN",
};

/** Normalise a code or display name (as some runtimes send) to a registry code. */
export function normalizeErrorCode(raw: string): MacpErrorCode | string {
  const head = raw.split(":")[0]?.trim() ?? raw;
  if ((ERROR_CODES as readonly string[]).includes(head)) return head as MacpErrorCode;
  return ERROR_NAME_TO_CODE[head] ?? raw;
}
