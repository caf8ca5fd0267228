// Actions of signed-in people, end to end on the server (DESIGN.md, "One
// human action"): validated input → the session's current state folded from
// its history → decide() (the same rules the UI uses to enable the button) →
// an envelope built here, with the person's own participant id as sender and
// the browser's message_id → Send as the person's runtime identity → the Ack
// as an ActionResult.
//
// Idempotency: the browser makes one message_id per attempt and reuses it on
// retry. The runtime deduplicates by message_id within a session; ids the
// console derives (session_id of a new session, handoff_id, task_id,
// commitment_id) come from the message_id too, so a retry is the same
// message. A retry arriving after the first attempt was accepted is answered
// from the session's history (duplicate=true) before decide() would refuse it
// for the state the first attempt created.
//
// This file is the wiring ActionService's handlers call. The pieces:
//   core.ts      the in-session pipeline, decide() context, size check, Send, audit
//   results.ts   Ack → ActionResult, refusals, ids recovered from history
//   start.ts     SessionStart (session id derived from the message_id)
//   handoff.ts   offer, context, accept/decline, commit
//   task.ts      request, accept/reject, update, complete, fail, commit
//   cancel.ts    cancel, including an admin's cancel on the initiator's behalf
//   directory.ts the people picker's users and agents
import type { ActionResult, ListDirectoryResponse } from "@/lib/gen/baton/v1/actions_pb";
import type { PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import type {
  CancelInput,
  CommitInput,
  ContextInput,
  OfferInput,
  RespondInput,
  StartInput,
  TaskCommitInput,
  TaskCompleteInput,
  TaskFailInput,
  TaskRequestInput,
  TaskRespondInput,
  TaskUpdateInput,
} from "../action-input";
import { decide, type Action, type Decision } from "@/lib/authz/decide";
import type { PolicySummary } from "@/lib/authz/policy-summary";
import { upstreamError } from "../errors";
import type { LoadedSession } from "../session-state";
import type { SignedInUser } from "../identity";
import type { PolicyCache } from "../policies";
import { cancelSession } from "./cancel";
import { ActionCore, type ActionGatewayOptions } from "./core";
import { listDirectory } from "./directory";
import { attachContextSpec, commitSpec, offerSpec, respondSpec } from "./handoff";
import { startSession } from "./start";
import { taskCommitSpec, taskCompleteSpec, taskFailSpec, taskRequestSpec, taskRespondSpec, taskUpdateSpec } from "./task";

export type { ActionGatewayOptions } from "./core";
export { explainCode, resultFromAck } from "./results";
export { FROZEN_CONTEXT_EXTENSION, SCOPE_EXTENSION, sessionIdForStart } from "./start";

export class ActionGateway {
  readonly policies: PolicyCache;
  private readonly core: ActionCore;

  constructor(options: ActionGatewayOptions) {
    this.core = new ActionCore(options);
    this.policies = this.core.policies;
  }

  get maxPayloadBytes(): number {
    return this.core.options.maxPayloadBytes;
  }

  startSession(user: SignedInUser, input: StartInput, signal?: AbortSignal): Promise<ActionResult> {
    return startSession(this.core, user, input, signal);
  }

  // handoff
  offer(user: SignedInUser, input: OfferInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, offerSpec(input), signal);
  }
  attachContext(user: SignedInUser, input: ContextInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, attachContextSpec(input), signal);
  }
  accept(user: SignedInUser, input: RespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, respondSpec("accept", input), signal);
  }
  decline(user: SignedInUser, input: RespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, respondSpec("decline", input), signal);
  }
  commit(user: SignedInUser, input: CommitInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, commitSpec(input), signal);
  }

  cancel(user: SignedInUser, input: CancelInput, signal?: AbortSignal): Promise<ActionResult> {
    return cancelSession(this.core, user, input, signal);
  }

  // task
  taskRequest(user: SignedInUser, input: TaskRequestInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskRequestSpec(input), signal);
  }
  taskAccept(user: SignedInUser, input: TaskRespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskRespondSpec("taskAccept", input), signal);
  }
  taskReject(user: SignedInUser, input: TaskRespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskRespondSpec("taskReject", input), signal);
  }
  taskUpdate(user: SignedInUser, input: TaskUpdateInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskUpdateSpec(input), signal);
  }
  taskComplete(user: SignedInUser, input: TaskCompleteInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskCompleteSpec(input), signal);
  }
  taskFail(user: SignedInUser, input: TaskFailInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskFailSpec(input), signal);
  }
  taskCommit(user: SignedInUser, input: TaskCommitInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.core.inSession(user, input, taskCommitSpec(input), signal);
  }

  /**
   * A session's current state and what decide() says of `action` for `user`
   * there (the escalation scheduler asks before it acts for an owner).
   */
  async decideOn(
    user: SignedInUser,
    sessionId: string,
    action: Action,
    signal?: AbortSignal,
  ): Promise<{ loaded: LoadedSession; decision: Decision; policy: PolicySummary | undefined }> {
    const [loaded, users] = await this.core.loadWithUsers(sessionId, signal);
    const ctx = await this.core.decideContext(loaded, users, {}, signal);
    return {
      loaded,
      decision: decide({ role: user.role, participantId: user.participantId }, loaded.view, action, ctx),
      policy: ctx.policy,
    };
  }

  /** Display names from the users file (ids of others shortened). */
  async names(): Promise<(id: string) => string> {
    return this.core.nameOf(await this.core.options.users.users());
  }

  /** A registered policy's descriptor (for decide() in the browser), or null when the runtime has none. */
  async policy(policyId: string, signal?: AbortSignal): Promise<PolicyDescriptor | null> {
    try {
      const descriptor = await this.core.options.actions.getPolicy(policyId, signal);
      if (descriptor) this.policies.remember(descriptor);
      return descriptor;
    } catch (e) {
      throw upstreamError(e, `policy ${policyId}`);
    }
  }

  /** Users of the console, and the other participant ids (agents) seen in sessions. */
  directory(signal?: AbortSignal): Promise<ListDirectoryResponse> {
    return listDirectory(this.core, signal);
  }
}
