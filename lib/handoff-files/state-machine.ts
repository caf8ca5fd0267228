// The v0.1 state machine and the actions people and agents take on a
// handoff. Pure: the console, the CLI and the bridge all decide with these
// functions, so they refuse the same things with the same sentences.
//
//   offered → accepted → completed
//   accepted → failed
//   offered → rejected
//   failed → offered   (re-offer)
//
// Nothing else. completed and rejected are final.

import { HandoffError } from "./errors";
import { isoNow, type HandoffRecord, type HandoffStatus, type JsonObject } from "./record";
import { ACTION_TARGET, TRANSITIONS, canTransition, type ActionKind as TableActionKind } from "./transitions";

export { TRANSITIONS, canTransition, ACTION_TARGET };

export function isFinal(status: HandoffStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

/**
 * How two snapshots of the same file relate:
 * - `same`: the status did not change (other fields may have);
 * - `legal`: one allowed step;
 * - `gap`: not one step, but reachable through states nobody observed in
 *   between (e.g. offered → completed when the accept was missed): allowed,
 *   reported as a gap;
 * - `illegal`: not reachable at all (leaving completed or rejected).
 */
export type StepKind = "same" | "legal" | "gap" | "illegal";

export function classifyStep(from: HandoffStatus, to: HandoffStatus): StepKind {
  if (from === to) return "same";
  if (canTransition(from, to)) return "legal";
  return reachable(from).has(to) ? "gap" : "illegal";
}

function reachable(from: HandoffStatus): Set<HandoffStatus> {
  const seen = new Set<HandoffStatus>();
  const queue: HandoffStatus[] = [from];
  while (queue.length) {
    const s = queue.shift() as HandoffStatus;
    for (const n of TRANSITIONS[s]) {
      if (seen.has(n)) continue;
      seen.add(n);
      queue.push(n);
    }
  }
  return seen;
}

/** A plain sentence for a step that is not `same` or `legal`. */
export function describeStep(from: HandoffStatus, to: HandoffStatus): string | undefined {
  const kind = classifyStep(from, to);
  if (kind === "illegal") return `illegal transition ${from} → ${to}: ${from} is final`;
  if (kind === "gap") return `went from ${from} to ${to} without the states in between being observed`;
  return undefined;
}

/** Context values given on the command line or in a form: strings only. */
export type ContextPatch = Readonly<Record<string, string>>;

export type HandoffAction =
  | { kind: "accept"; agent: string }
  | { kind: "reject"; agent: string; context?: ContextPatch }
  | { kind: "complete"; agent?: string; context?: ContextPatch }
  | { kind: "fail"; agent?: string; context?: ContextPatch }
  /** failed → offered; `to` "" offers it to anyone, undefined keeps nobody (same as ""). */
  | { kind: "reoffer"; agent?: string; to?: string; context?: ContextPatch };

export type ActionKind = HandoffAction["kind"];
// The table in transitions.ts names the same actions.
const _sameKinds: TableActionKind extends ActionKind ? (ActionKind extends TableActionKind ? true : never) : never = true;
void _sameKinds;

/** Who may take an action (the same roles as the MACP Task mode): undefined when allowed, else why not. */
export function refusalFor(record: HandoffRecord, action: HandoffAction): string | undefined {
  const target = ACTION_TARGET[action.kind];
  if (!canTransition(record.status, target)) return illegalSentence(record, action.kind);
  const agent = action.agent?.trim();
  if (action.agent !== undefined && agent === "") return "the acting agent must not be empty";
  switch (action.kind) {
    case "accept":
    case "reject":
      if (record.to_agent !== "" && agent !== record.to_agent) return `it is offered to ${record.to_agent}, not ${agent}`;
      return undefined;
    case "complete":
    case "fail":
      if (agent !== undefined && record.to_agent !== "" && agent !== record.to_agent)
        return `it was accepted by ${record.to_agent}, not ${agent}`;
      return undefined;
    case "reoffer":
      if (agent !== undefined && agent !== record.from_agent) return `only ${record.from_agent}, who offered it, can re-offer it`;
      return undefined;
  }
}

function illegalSentence(record: HandoffRecord, kind: ActionKind): string {
  const who = record.to_agent ? ` by ${record.to_agent}` : "";
  const now =
    record.status === "accepted"
      ? `it is already accepted${who}`
      : record.status === "offered"
        ? "it is offered and nobody has accepted it yet"
        : record.status === "failed"
          ? `it has failed${who}`
          : `it is already ${record.status}${who}`;
  const allowed = TRANSITIONS[record.status];
  const next = allowed.length ? ` (from ${record.status} it can only go to ${allowed.join(" or ")})` : ` (${record.status} is final)`;
  return `cannot ${kind} ${record.task_id}: ${now}${next}`;
}

/**
 * The record after `action`, or a HandoffError (`illegal-transition` or
 * `not-allowed`) that says why not. updated_at becomes `nowMs`.
 */
export function applyAction(record: HandoffRecord, action: HandoffAction, nowMs: number): HandoffRecord {
  const target = ACTION_TARGET[action.kind];
  const refusal = refusalFor(record, action);
  if (refusal !== undefined) {
    throw new HandoffError(canTransition(record.status, target) ? "not-allowed" : "illegal-transition", refusal);
  }
  const next: HandoffRecord = { ...record, status: target, updated_at: isoNow(nowMs) };
  if (action.kind === "accept" || action.kind === "reject") next.to_agent = action.agent.trim();
  if (action.kind === "complete" || action.kind === "fail") {
    if (action.agent !== undefined && record.to_agent === "") next.to_agent = action.agent.trim();
  }
  if (action.kind === "reoffer") next.to_agent = action.to?.trim() ?? "";
  if ("context" in action && action.context && Object.keys(action.context).length)
    next.context = mergeContext(record.context, action.context);
  return next;
}

export function mergeContext(base: JsonObject, patch: ContextPatch): JsonObject {
  const out = Object.create(null) as JsonObject;
  for (const [k, v] of Object.entries(base)) out[k] = v;
  for (const [k, v] of Object.entries(patch)) out[k] = v;
  return out;
}

export interface OfferInput {
  description: string;
  from: string;
  /** "" or undefined: anyone may take it. */
  to?: string;
  context?: ContextPatch | JsonObject;
  /** Default: a random UUID v4. */
  taskId?: string;
}

/** A new `offered` record. */
export function newOffer(input: OfferInput, nowMs: number, newId: () => string = () => globalThis.crypto.randomUUID()): HandoffRecord {
  const from = input.from.trim();
  if (from === "") throw new HandoffError("bad-input", "the offering agent (--from) must not be empty");
  const now = isoNow(nowMs);
  const context = Object.create(null) as JsonObject;
  for (const [k, v] of Object.entries(input.context ?? {})) context[k] = v;
  return {
    task_id: input.taskId ?? newId(),
    from_agent: from,
    to_agent: input.to?.trim() ?? "",
    status: "offered",
    description: input.description,
    context,
    created_at: now,
    updated_at: now,
  };
}
