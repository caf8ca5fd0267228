// The v0.1 state machine's table, with no imports beyond types: shared by
// state-machine.ts (the library's checks) and lib/authz/decide.ts (which the
// browser bundles too, so it must not pull in ajv or node:fs).
//
//   offered → accepted → completed
//   accepted → failed
//   offered → rejected
//   failed → offered   (re-offer)

import type { HandoffStatus } from "./record";

export type { HandoffStatus } from "./record";

export const TRANSITIONS: Readonly<Record<HandoffStatus, readonly HandoffStatus[]>> = Object.freeze({
  offered: ["accepted", "rejected"],
  accepted: ["completed", "failed"],
  failed: ["offered"],
  completed: [],
  rejected: [],
});

export function canTransition(from: HandoffStatus, to: HandoffStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export type ActionKind = "accept" | "reject" | "complete" | "fail" | "reoffer";

export const ACTION_TARGET: Readonly<Record<ActionKind, HandoffStatus>> = Object.freeze({
  accept: "accepted",
  reject: "rejected",
  complete: "completed",
  fail: "failed",
  reoffer: "offered",
});
