// The session list row, folded from a session's envelopes: what a console's
// list shows and what Baton's runtime keeps with its log (the list-row feed,
// baton.v1.RuntimeCatalogService). One fold for both, so a row the runtime
// stores equals the row a console folds from the same history. Pure: no I/O,
// and the only clock is the one passed in.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { HandoffContextPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { Draft } from "@/lib/macp/projections/draft";
import { emptySessionView, reduceSessionDraft, type SessionView } from "@/lib/macp/projections/session";
import { phaseDetail } from "@/lib/macp/projections/status";
import { lastActivityMs } from "./activity";

/**
 * Number of client envelopes in the session's accepted history, from
 * metadata: the SessionStart plus every accepted non-start message (§3.8).
 */
export function historyCount(meta: SessionMetadata): number {
  let n = 1;
  for (const a of meta.participantActivity) n += a.messageCount;
  return n;
}

export function isTerminalState(state: SessionState): boolean {
  return state === SessionState.RESOLVED || state === SessionState.EXPIRED || state === SessionState.CANCELLED;
}

/**
 * A session's projection as a list row folds it: the shared SessionView
 * reducer plus message_id deduplication (a passive subscribe may deliver an
 * envelope twice around its replay/live boundary). `count` is the number of
 * distinct envelopes folded, which is also the `after_sequence` to resume an
 * upstream subscription from.
 */
export class SessionFold {
  private readonly seen = new Set<string>();
  private folded: SessionView;
  private n = 0;
  /**
   * Adds between two reads of `view` fold as one batch (see draft.ts), so a
   * history replay of n envelopes is linear rather than copying growing lists
   * per envelope. Reading `view` ends the batch: a view handed out is never
   * written again.
   */
  private draft: Draft | undefined;

  constructor(sessionId: string, mode = "") {
    this.folded = emptySessionView(sessionId, mode);
  }

  get view(): SessionView {
    this.draft = undefined;
    return this.folded;
  }

  /**
   * The current view without ending the batch: valid only until the next
   * add(), which may write it in place. For a caller that reads it at once
   * and keeps nothing of it (the runtime computing a row per append), so a
   * long-lived fold stays linear in its envelopes.
   */
  peek(): SessionView {
    return this.folded;
  }

  get count(): number {
    return this.n;
  }

  /** Fold one envelope; false when it was a duplicate and changed nothing. */
  add(envelope: Envelope): boolean {
    const id = envelope.messageId;
    if (id !== "") {
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    this.n += 1;
    this.draft ??= new Draft();
    this.folded = reduceSessionDraft(this.folded, { envelope, sequence: this.n }, this.draft);
    return true;
  }
}

export { metadataActivityMs } from "./activity";

/**
 * The list row for a session: runtime metadata plus the projection fields.
 * `view` is undefined when the history could not be read (e.g. the console's
 * identity may not read the session); the row then carries metadata only.
 * Envelope timestamps come from agents' clocks: none may claim a time later
 * than `nowMs` (the runtime passes the receive time of the newest record, so
 * its rows follow from the log alone).
 */
export function toSummary(
  meta: SessionMetadata,
  view: SessionView | undefined,
  eventCount: number,
  nowMs: number = Date.now(),
  committers?: readonly string[],
): SessionSummary {
  const activity = lastActivityMs(meta, view?.lastActivityMs, nowMs);
  const started = view?.started === true;
  // When the status began: an agent's clock is clamped as activity is, and never before the start.
  const since =
    started && view.phaseSinceMs !== undefined ? Math.max(Math.min(view.phaseSinceMs, activity), Number(meta.startedAtUnixMs)) : 0;
  return create(SessionSummarySchema, {
    metadata: meta,
    phase: started ? view.phase : "",
    intent: view?.intent ?? "",
    currentOwner: view?.currentOwner ?? (meta.initiator || ""),
    currentTarget: view?.currentTarget ?? "",
    scope: view?.scope ?? "",
    lastActivityUnixMs: BigInt(Math.trunc(activity)),
    eventCount: BigInt(eventCount),
    outcome: view?.commitment ? (view.commitment.outcomePositive ? "positive" : "negative") : "",
    phaseSinceUnixMs: BigInt(Math.trunc(since)),
    phaseDetail: started ? phaseDetail(view, committers) : "",
  });
}

/**
 * Who must act next in a session (an inbox's candidates): the active offer's
 * target, the committer once an offer is accepted or declined, the task's
 * assignee, or the requester once a report is in. Empty once closed.
 * `committers`: the approvers a lead-approval policy designates (they commit
 * instead of the owner); the runtime knows the bound policy, a console
 * folding a plain runtime's history does not.
 */
export function nextActors(meta: SessionMetadata, view: SessionView | undefined, committers?: readonly string[]): string[] {
  if (!view?.started || isTerminalState(meta.state) || view.commitment) return [];
  const out = new Set<string>();
  // Who commits: the approvers a lead-approval policy designates, else the owner (the requester for a task).
  const commit = (fallback: string): void => {
    if (committers && committers.length > 0) for (const c of committers) out.add(c);
    else out.add(fallback);
  };
  const offers = view.handoff?.offers ?? [];
  const last = offers.at(-1);
  if (last && (last.status === "offered" || last.status === "context_sent")) out.add(last.target);
  const owner = view.currentOwner ?? view.initiator;
  if (offers.some((o) => o.status === "accepted") || last?.status === "declined") commit(owner);
  // A declined offer is back with its owner (re-offer or cancel), whoever commits.
  if (last?.status === "declined" && !offers.some((o) => o.status === "accepted")) out.add(last.offeredBy || owner);
  const task = view.task?.task;
  if (task) {
    if (task.terminalReport) commit(task.requester);
    else if (task.activeAssignee !== undefined) out.add(task.activeAssignee);
    else if (turnedDownByAssignee(task)) out.add(task.requester);
    else if (task.requestedAssignee) out.add(task.requestedAssignee);
  }
  out.delete("");
  return [...out];
}

/** A task turned down by the one it was asked of: nobody else may take it, so it is back with its requester. */
export function turnedDownByAssignee(task: {
  requestedAssignee: string;
  rejections: readonly { sender: string; assignee: string }[];
}): boolean {
  const asked = task.requestedAssignee;
  return asked !== "" && task.rejections.some((r) => r.sender === asked || r.assignee === asked);
}

/** The envelope as a list row folds it: a context's bytes dropped (the list never shows them). */
export function leanEnvelope(env: Envelope): Envelope {
  if (env.messageType !== "HandoffContext" || env.payload.length <= 256) return env;
  try {
    const p = fromBinary(HandoffContextPayloadSchema, env.payload);
    return { ...env, payload: toBinary(HandoffContextPayloadSchema, { ...p, context: new Uint8Array(0) }) };
  } catch {
    return { ...env, payload: new Uint8Array(0) };
  }
}
