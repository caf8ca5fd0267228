// Agent-side MACP client layer. Names follow the official MACP SDKs so agent
// code reads like their documentation:
//
//   const client = new MacpClient({ address: "127.0.0.1:50051", auth: Auth.devAgent("agent://alice") });
//   const session = new HandoffSession(client);
//   await session.start({ intent: "hand over on-call", participants: [alice, bob], ttlMs: 3_600_000 });
//   await session.offer({ targetParticipant: bob, scope: "payments on-call" });

export { Auth, authHeaders, authSender, describeAuth, type AuthConfig, type DevHeaderStyle } from "./auth";
export {
  DEFAULT_RUNTIME_ADDRESS,
  MacpClient,
  runtimeBaseUrl,
  type CallOptions,
  type HistoryOptions,
  type MacpClientOptions,
  type PolicyInit,
  type RetryOptions,
  type SendOptions,
  type SequencedEnvelope,
  type TlsOptions,
} from "./client";
export { codeForConnectError, explainError, isRetryable, MacpAckError, MacpError, MacpStreamError, MacpUsageError } from "./errors";
export { checkContextSize, contentTypeFor, encodeContext, formatBytes, isTextual, MAX_PAYLOAD_BYTES, readContextFile } from "./content";
export { HandoffProjection, TaskProjection } from "./projections";
export { ModeSession, type CommitInput, type MessageOptions, type ModeSessionOptions, type StartInput } from "./session";
export { HandoffSession, type ContextInput, type OfferInput, type RespondInput } from "./handoff";
export { TaskSession, type CompleteInput, type FailInput, type RequestInput, type TaskResponseInput, type UpdateInput } from "./task";
export {
  buildHandoffPolicy,
  buildTaskPolicy,
  sameRules,
  type CommitmentAuthority,
  type HandoffPolicyInput,
  type TaskPolicyInput,
} from "./policy";
