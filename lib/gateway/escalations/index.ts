// Escalation of an unanswered "Hand off…" offer (issue #12, item 8): "if
// nobody answers in N minutes, tell the approvers, then re-offer to the next
// person". The console keeps each chain in its data folder
// (escalations.sqlite next to the catalog) and runs it on the owner's behalf,
// with the owner's own runtime identity, through the same ActionGateway the
// owner's clicks go through (decide() first, every time).
//
// Protocol: MACP handoff mode takes no new offer while one is pending and
// has no way to withdraw an offer (PROTOCOL.md §4.4: "only one offer is
// outstanding at a time"; only the target answers it). So a REOFFER step
// cancels the unanswered session (CancelSession, which the owner may do,
// §3.7) and hands off again in a new session: the same intent, scope,
// reason, policy, time to live and runbook, to the next person. The chain
// then watches the new session's offer.
//
// Exactly once: each step's ids are derived from the chain and the step
// index (stepIds), so a step re-run after a crash sends the same envelopes,
// which the runtime answers as duplicates, and the same webhook delivery
// ids, which the outbox ignores. A REOFFER is marked in flight before its
// first send: a restart finishes it rather than reading the session it
// cancelled itself as "answered". The scheduler arms one timer for the
// earliest due chain; at start it fires the overdue ones once.
//
// Stopping: a chain stops when its offer is no longer pending (accepted,
// declined, committed, cancelled, expired). The catalog's writes are watched
// (the session's row), and each step re-reads the session before it acts.
//
// The parts: model.ts (the chain record and the pure rules), store.ts (the
// SQLite file), scheduler.ts (Escalations: timers, the catalog watch, the
// chain's state), steps.ts (NOTIFY and REOFFER for the owner).
export * from "./model";
export { EscalationStore } from "./store";
export { Escalations, type EscalationsOptions } from "./scheduler";
