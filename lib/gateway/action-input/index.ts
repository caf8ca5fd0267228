// Validation of ActionService requests at the edge, before anything is read
// from or sent to the runtime. Pure: every function takes the request (and,
// where a rule needs it, the users file's records) and returns clean values
// or throws a ConnectError INVALID_ARGUMENT naming the field, with a
// FieldViolation detail the browser can attach to the right input. What each
// field may hold is the action contract, lib/actions/rules.ts (shared with
// the forms); this module words its problems for API callers: the shared
// field checks (fields.ts), then one module per action family (session.ts:
// start and cancel; handoff.ts; task.ts).
export { LIMITS } from "@/lib/actions/rules";
export {
  contentTypeOf,
  invalidField,
  jsonTextOf,
  messageIdOf,
  optionalIdOf,
  participantOf,
  sessionIdOf,
  textOf,
  type SessionMessageInput,
} from "./fields";
export { parseCancel, parseStart, type CancelInput, type PolicyRequest, type StartInput } from "./session";
export {
  parseAttachContext,
  parseCommit,
  parseOffer,
  parseRespond,
  type CommitInput,
  type ContextInput,
  type OfferInput,
  type RespondInput,
} from "./handoff";
export {
  parseTaskCommit,
  parseTaskComplete,
  parseTaskFail,
  parseTaskRequest,
  parseTaskRespond,
  parseTaskUpdate,
  type TaskCommitInput,
  type TaskCompleteInput,
  type TaskFailInput,
  type TaskRequestInput,
  type TaskRespondInput,
  type TaskUpdateInput,
} from "./task";
