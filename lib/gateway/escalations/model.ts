// An escalation chain as the store keeps it and the API shows it, and the
// pure rules the scheduler and the steps share: the ids a step sends with
// (derived, so a re-run is a duplicate), the policy a re-offer binds, when a
// chain stops, and a request's chain checked with the action contract.
import { createHash } from "node:crypto";
import { checkEscalationChain, type EscalationStepInput } from "@/lib/actions/rules";
import { commitmentAuthority, designatedRoles, implicitAcceptTimeoutMs, type PolicySummary } from "@/lib/authz/policy-summary";
import type { SessionView } from "@/lib/macp/projections/session";
import type { PolicyRequest } from "../action-input";
import { invalidField } from "../action-input";
import { pendingOffer } from "../actions/results";

export type EscalationStateName = "pending" | "done" | "stopped" | "cancelled" | "failed";

/** One step the console ran for the owner. */
export interface EscalationActionRecord {
  step: number;
  kind: EscalationStepInput["kind"];
  sessionId: string;
  messageIds: string[];
  cancelledSessionId: string;
  participants: string[];
  atMs: number;
}

export interface EscalationRecord {
  origin: string;
  /** The session whose offer is watched now. */
  sessionId: string;
  /** That offer's handoff_id. */
  handoffId: string;
  /** Its target (who must answer now). */
  target: string;
  /** The owner's participant id and account. */
  owner: string;
  ownerUser: string;
  state: EscalationStateName;
  steps: EscalationStepInput[];
  nextStep: number;
  /** When the next step runs (0: none). */
  nextAtMs: number;
  /** A REOFFER started and not yet recorded as done (finish it, never re-check the session it cancelled). */
  inflight: boolean;
  done: EscalationActionRecord[];
  detail: string;
  sessionIds: string[];
  createdMs: number;
  updatedMs: number;
}

/** The ids one step sends with, derived from the chain and the step (UUID v4 layout). */
export function stepIds(
  origin: string,
  step: number,
): { start: string; offer: string; cancel: string; context: (i: number) => string; delivery: string } {
  const id = (part: string) => {
    const h = createHash("sha256")
      .update("baton escalation\u0000")
      .update(origin)
      .update("\u0000")
      .update(String(step))
      .update("\u0000")
      .update(part)
      .digest();
    h[6] = ((h[6] as number) & 0x0f) | 0x40;
    h[8] = ((h[8] as number) & 0x3f) | 0x80;
    const hex = h.subarray(0, 16).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  };
  return { start: id("start"), offer: id("offer"), cancel: id("cancel"), context: (i) => id(`context:${i}`), delivery: id("notify") };
}

/** The policy choice that re-creates a session's bound policy in a new session. */
export function policyRequestOf(policy: PolicySummary | undefined): PolicyRequest {
  if (!policy) return { kind: "default" };
  if (commitmentAuthority(policy) === "designated_role" && designatedRoles(policy).length > 0)
    return { kind: "approval", approvers: [...designatedRoles(policy)] };
  const t = implicitAcceptTimeoutMs(policy);
  if (t > 0) return { kind: "implicit", timeoutMs: t };
  return { kind: "default" };
}

/** Why a chain stops, when the offer it watches is no longer waiting; undefined while it waits. */
export function stopReason(view: SessionView, lifecycle: string, handoffId: string, nameOf: (id: string) => string): string | undefined {
  const offer = view.handoff?.offers.find((o) => o.handoffId === handoffId);
  if (offer?.status === "accepted") return `${nameOf(offer.acceptedBy ?? offer.target)} accepted the offer.`;
  if (offer?.status === "declined") return `${nameOf(offer.declinedBy ?? offer.target)} declined the offer.`;
  if (view.commitment || lifecycle === "Resolved") return "The session was committed.";
  if (lifecycle === "Cancelled") return "The session was cancelled.";
  if (lifecycle === "Expired") return "The session expired.";
  if (!offer) return "The offer it watched is not in the session.";
  const pending = pendingOffer(view);
  if (pending?.handoffId !== handoffId) return "Another offer was made in the session.";
  if (lifecycle !== "Open") return `The session is ${lifecycle.toLowerCase()}.`;
  return undefined;
}

/** What a NOTIFY step tells (the webhooks' offer.escalated event). */
export interface EscalationNotice {
  deliveryKey: string;
  sessionId: string;
  intent: string;
  scope: string;
  owner: string;
  /** Who still has not answered. */
  target: string;
  /** Who is told. */
  to: string[];
  involved: string[];
  unansweredMs: number;
  atMs: number;
}

/** The webhooks' path for offer.escalated. */
export interface EscalationHooks {
  escalated(notice: EscalationNotice): Promise<void> | void;
}

export function sameSteps(rec: EscalationRecord, steps: readonly EscalationStepInput[]): boolean {
  const norm = (xs: readonly EscalationStepInput[]) =>
    JSON.stringify(xs.map((x) => [x.kind, x.afterMinutes, [...new Set(x.participants.map((p) => p.trim()))]]));
  return norm(steps) === norm(rec.steps);
}

/** A request's chain checked with the action contract (INVALID_ARGUMENT naming the field). */
export function chainOf(steps: readonly EscalationStepInput[], owner: string, firstTarget: string, field: string): EscalationStepInput[] {
  const c = checkEscalationChain(steps, { owner, firstTarget });
  if (c.problem) {
    const p = c.problem.problem;
    const text =
      p.code === "escalation"
        ? p.detail
        : p.code === "required"
          ? "is required: at least one step"
          : p.code === "not-participant"
            ? "is not a participant id (no spaces, at most 512 characters)"
            : "is not allowed";
    throw invalidField(c.problem.field === "steps" ? field : `${field}${c.problem.field.slice("steps".length)}`, text);
  }
  return c.value;
}
