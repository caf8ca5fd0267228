// The bridge between a v0.1 handoff directory and MACP Task-mode sessions.
export { HandoffBridge, type BridgeEvent, type BridgeOptions } from "./bridge";
export { devCredentials, parseTokens, tokenCredentials, type Credentials } from "./credentials";
export {
  BRIDGE_MESSAGE_PREFIX,
  bridgeCommitmentId,
  bridgeMessageId,
  bridgeSessionId,
  participantsFor,
  planFor,
  type BridgeStep,
  type Plan,
  type SessionPhase,
  type SessionView,
} from "./mapping";
export { SqliteBridgeState, type BridgePhase, type BridgeTask } from "./state";
