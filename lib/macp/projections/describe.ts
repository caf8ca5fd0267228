// Short, plain sentences announcing a phase change, for screen readers
// (an aria-live region). Pure.

import { activeOffer, lastOffer, type HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionView } from "@/lib/macp/projections/session";

const PREFIXES = ["human:", "agent://", "agent:", "user:"];
/** A participant as a sentence names it: the id without its conventional prefix (never an offer or task id). */
function named(id: string): string {
  for (const p of PREFIXES) if (id.startsWith(p) && id.length > p.length) return id.slice(p.length);
  return id;
}

/**
 * A one-sentence description of the phase change between two views of the
 * same session, or null when the phase did not change. Only `before.phase`
 * is read, so a batch fold may pass `{ phase }` saved before an event.
 * Example: "Offer 1 pending for bob".
 */
export function describePhaseChange(before: Pick<SessionView, "phase"> | undefined, after: SessionView): string | null {
  if (before !== undefined && before.phase === after.phase) return null;
  if (before === undefined && after.phase === "Pending") return null;
  if (after.handoff) return describeHandoff(after);
  if (after.task) return describeTask(after);
  if (after.phase === "Committed" && after.commitment) return committedSentence("Session", after);
  return `Session ${after.phase.toLowerCase()}`;
}

function describeHandoff(view: SessionView): string {
  const h = view.handoff;
  if (!h) return `Handoff ${view.phase.toLowerCase()}`;
  const offer: HandoffRecord | undefined = activeOffer(h) ?? lastOffer(h);
  const n = offer ? h.offers.indexOf(offer) + 1 : 0;
  const which = n > 0 ? `offer ${n}` : "the offer";
  const target = offer?.target ? named(offer.target) : "an unnamed participant";
  switch (h.phase) {
    case "Pending":
      return "Handoff pending: no offer yet";
    case "OfferPending":
      return `${n > 0 ? `Offer ${n}` : "Offer"} pending for ${target}`;
    case "ContextSharing":
      return `Context shared with ${target}`;
    case "Accepted":
      return `${offer?.acceptedBy ? named(offer.acceptedBy) : target} accepted ${which}`;
    case "Declined":
      return `${offer?.declinedBy ? named(offer.declinedBy) : target} declined ${which}`;
    case "Committed":
      return committedSentence("Handoff", view);
  }
}

function describeTask(view: SessionView): string {
  const t = view.task;
  const task = t?.task;
  if (!t) return `Task ${view.phase.toLowerCase()}`;
  const id = "Task";
  switch (t.phase) {
    case "Pending":
      return "Task pending: not requested yet";
    case "Requested":
      return task?.requestedAssignee ? `${id} requested from ${named(task.requestedAssignee)}` : `${id} requested from any participant`;
    case "InProgress":
      return `${task?.activeAssignee ? named(task.activeAssignee) : "An assignee"} took the task, in progress`;
    case "Completed": {
      const report = task?.terminalReport;
      const by = report?.assignee || task?.activeAssignee;
      return `${id} completed by ${by ? named(by) : "the assignee"}`;
    }
    case "Failed": {
      const report = task?.terminalReport;
      const code = report?.kind === "fail" && report.errorCode ? ` (${report.errorCode})` : "";
      const retry = report?.kind === "fail" && report.retryable ? ", retryable" : "";
      return `${id} failed${code}${retry}`;
    }
    case "Committed":
      return committedSentence("Task", view);
  }
}

function committedSentence(subject: string, view: SessionView): string {
  const c = view.commitment;
  if (!c) return `${subject} committed`;
  return `${subject} committed: ${c.action}, ${c.outcomePositive ? "positive" : "negative"} outcome`;
}
