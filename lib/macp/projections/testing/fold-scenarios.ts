// Event sequences for the batch-fold tests (reduceSessionMany,
// applySubscribeBatch): scripted Handoff and Task sessions in the style of the
// conformance vectors, seeded random interleavings of the same messages, and
// helpers to split them into batches and to freeze what a batch receives.
// Test-only.

import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import type { SessionEvent } from "@/lib/macp/projections/types";

export const OWNER = "agent://owner";
export const BOB = "agent://bob";
export const CAROL = "agent://carol";
const OTHER_SESSION = "01JOTHERSESSION00000000001";

/** Deterministic PRNG (mulberry32): floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

/** Number the events 1..n as a stream would; some carry a receive time, some no envelope timestamp. */
function sequenced(events: SessionEvent[]): SessionEvent[] {
  return events.map((e, i) => ({ ...e, sequence: i + 1 }));
}

const start = (mode: string) =>
  makeEvent(
    mode,
    "SessionStart",
    {
      intent: "move it",
      participants: [OWNER, BOB, CAROL],
      modeVersion: "1.0.0",
      configurationVersion: "cfg",
      policyVersion: "",
      ttlMs: 60_000n,
      roots: [{ uri: "macp://r", name: "R" }],
      contextId: "ctx-1",
      extensions: { "x.ext": new Uint8Array([1]) },
    },
    { sender: OWNER, ts: 10_000 },
  );

const core = (mode: string, someType: string) => ({
  suspend: () => makeEvent(mode, "SessionSuspend", { reason: "pause", suspendedBy: OWNER }, { sender: OWNER }),
  resume: () => makeEvent(mode, "SessionResume", { reason: "go", resumedBy: OWNER }, { sender: OWNER }),
  cancel: () => makeEvent(mode, "SessionCancel", { reason: "stop", cancelledBy: OWNER }, { sender: OWNER }),
  expired: () => makeEvent(mode, "TtlExpired", new Uint8Array()),
  /** A known message type whose payload does not decode. */
  garbage: () => makeEvent(mode, someType, new Uint8Array([0xff, 0xff, 0xff])),
  unknown: () => makeEvent(mode, "Wave", new Uint8Array([1, 2, 3])),
  commit: (action: string, outcomePositive: boolean) =>
    makeEvent(
      mode,
      "Commitment",
      { commitmentId: `c-${action}`, action, authorityScope: "s", reason: "r", outcomePositive, modeVersion: "1.0.0" },
      { sender: OWNER },
    ),
});

// ---------------------------------------------------------------------------
// Handoff

const handoff = {
  start: () => start(HANDOFF_MODE),
  offer: (id: string, target: string, scope = "pager") =>
    makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: id, targetParticipant: target, scope, reason: "shift" }, { sender: OWNER }),
  context: (id: string, text = "ctx", opts: { ts?: number; receivedAtMs?: number } = {}) => {
    const e = makeEvent(
      HANDOFF_MODE,
      "HandoffContext",
      { handoffId: id, contentType: "text/plain", context: new TextEncoder().encode(text) },
      { sender: OWNER, ...(opts.ts !== undefined ? { ts: opts.ts } : {}) },
    );
    if (opts.receivedAtMs !== undefined) e.receivedAtMs = opts.receivedAtMs;
    return e;
  },
  accept: (id: string, by: string, named = true) =>
    makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: id, acceptedBy: named ? by : "", reason: "ok" }, { sender: by }),
  decline: (id: string, by: string, named = false) =>
    makeEvent(HANDOFF_MODE, "HandoffDecline", { handoffId: id, declinedBy: named ? by : "", reason: "busy" }, { sender: by }),
  foreign: () =>
    makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "hx", targetParticipant: BOB }, { sessionId: OTHER_SESSION, sender: OWNER }),
  ...core(HANDOFF_MODE, "HandoffAccept"),
};

/** Scripted Handoff sessions, each numbered from sequence 1. */
export function handoffScenarios(): Record<string, SessionEvent[]> {
  const h = handoff;
  return {
    "offer, contexts, accept, late context, commitment": sequenced([
      h.start(),
      h.offer("h1", BOB),
      h.context("h1", "a"),
      h.context("h1", "b", { ts: 0, receivedAtMs: 12_345 }),
      h.context("h1", "c"),
      h.accept("h1", BOB),
      h.context("h1", "late"),
      h.commit("handoff.accepted", true),
      h.context("h1", "after commit"),
      h.offer("h2", CAROL),
      h.accept("h2", CAROL),
    ]),
    "decline, re-offer, accept, commitment": sequenced([
      h.start(),
      h.offer("h1", BOB),
      h.context("h1"),
      h.decline("h1", BOB),
      h.context("h1", "late after decline"),
      h.offer("h2", CAROL, "pager and runbook"),
      h.context("h2", "x"),
      h.context("h2", "y"),
      h.accept("h2", CAROL, false),
      h.commit("handoff.accepted", true),
    ]),
    "implicit accept by commitment": sequenced([h.start(), h.offer("h1", BOB), h.context("h1"), h.commit("handoff.accepted", true)]),
    "negative commitment after decline": sequenced([
      h.start(),
      h.offer("h1", BOB),
      h.decline("h1", BOB, true),
      h.commit("handoff.declined", false),
    ]),
    "rejected and foreign messages, lifecycle annotations": sequenced([
      h.offer("h0", BOB), // before SessionStart: adopts session id and mode
      h.start(),
      h.start(), // a second start changes nothing
      h.offer("h1", BOB),
      h.offer("h1", CAROL), // duplicate id
      h.context("h9"), // unknown id
      h.accept("h9", BOB),
      h.garbage(),
      h.unknown(),
      h.foreign(),
      h.suspend(),
      h.context("h1"),
      h.resume(),
      h.accept("h1", BOB),
      h.decline("h1", BOB), // second response
      h.commit("handoff.accepted", true),
      h.commit("handoff.accepted", false), // second commitment
      h.cancel(),
      h.expired(),
    ]),
  };
}

/** A random Handoff session: mostly valid traffic with rejected and foreign messages mixed in. */
export function randomHandoffEvents(rand: () => number, length: number): SessionEvent[] {
  const ids = ["h1", "h2", "h3"];
  const people = [BOB, CAROL];
  const makers: (() => SessionEvent)[] = [
    () => handoff.offer(pick(rand, ids), pick(rand, people), pick(rand, ["pager", "db"])),
    () => handoff.context(pick(rand, ids), `c${Math.floor(rand() * 1000)}`),
    () => handoff.context(pick(rand, ids), "t0", { ts: 0, receivedAtMs: 1_000 + Math.floor(rand() * 1000) }),
    () => handoff.context(pick(rand, ids)),
    () => handoff.context(pick(rand, ids)),
    () => handoff.accept(pick(rand, ids), pick(rand, people), rand() < 0.5),
    () => handoff.decline(pick(rand, ids), pick(rand, people), rand() < 0.5),
    // Rare, so that most of a session happens before the commitment freezes the phase.
    () => (rand() < 0.25 ? handoff.commit(pick(rand, ["handoff.accepted", "handoff.declined"]), rand() < 0.7) : handoff.context("h1")),
    () =>
      pick(rand, [handoff.suspend, handoff.resume, handoff.cancel, handoff.expired, handoff.garbage, handoff.unknown, handoff.foreign])(),
  ];
  const events = rand() < 0.9 ? [handoff.start()] : [];
  while (events.length < length) events.push(pick(rand, makers)());
  return sequenced(events);
}

// ---------------------------------------------------------------------------
// Task

const task = {
  start: () => start(TASK_MODE),
  request: (assignee = BOB, taskId = "t1") =>
    makeEvent(
      TASK_MODE,
      "TaskRequest",
      {
        taskId,
        title: "Build",
        instructions: "Do it",
        requestedAssignee: assignee,
        input: new Uint8Array([7]),
        deadlineUnixMs: 1773509100000n,
      },
      { sender: OWNER },
    ),
  accept: (sender = BOB, taskId = "t1") => makeEvent(TASK_MODE, "TaskAccept", { taskId, assignee: sender, reason: "ready" }, { sender }),
  reject: (sender = BOB, named = false) =>
    makeEvent(TASK_MODE, "TaskReject", { taskId: "t1", assignee: named ? sender : "", reason: "busy" }, { sender }),
  update: (progress: number, sender = BOB, taskId = "t1") =>
    makeEvent(TASK_MODE, "TaskUpdate", { taskId, status: "running", progress, message: `at ${progress}` }, { sender }),
  complete: (sender = BOB) =>
    makeEvent(TASK_MODE, "TaskComplete", { taskId: "t1", assignee: sender, output: new Uint8Array([1]), summary: "done" }, { sender }),
  fail: (retryable: boolean, sender = BOB) =>
    makeEvent(TASK_MODE, "TaskFail", { taskId: "t1", assignee: "", errorCode: "E_TIMEOUT", reason: "slow", retryable }, { sender }),
  ...core(TASK_MODE, "TaskUpdate"),
};

/** Scripted Task sessions, each numbered from sequence 1. */
export function taskScenarios(): Record<string, SessionEvent[]> {
  const t = task;
  return {
    "request, reject, accept, updates, give back, complete, commitment": sequenced([
      t.start(),
      t.request(BOB),
      t.reject(CAROL, true),
      t.accept(BOB),
      t.update(0.1),
      t.update(0.5),
      t.update(2), // clamped
      t.reject(BOB), // the active assignee gives it back
      t.accept(CAROL),
      t.update(0.7, CAROL),
      t.complete(CAROL),
      t.update(0.9, CAROL), // after the terminal report
      t.commit("task.completed", true),
    ]),
    "accept, updates, retryable failure, negative commitment": sequenced([
      t.start(),
      t.request(""),
      t.accept(CAROL),
      t.update(0.2, CAROL),
      t.update(Number.NaN, CAROL),
      t.fail(true, CAROL),
      t.complete(CAROL), // after the terminal report
      t.commit("task.failed", false),
    ]),
    "rejected and foreign messages, lifecycle annotations": sequenced([
      t.update(0.1), // before the request
      t.start(),
      t.request(BOB),
      t.request(CAROL, "t2"), // a second request
      t.accept(BOB, "t2"), // wrong task id
      t.update(0.3, BOB, "t2"),
      t.garbage(),
      t.unknown(),
      t.accept(BOB),
      t.accept(CAROL), // already held
      t.suspend(),
      t.update(0.4),
      t.resume(),
      t.commit("task.completed", true),
      t.update(0.6), // after a commitment: still recorded, phase stays Committed
      t.complete(),
      t.cancel(),
      t.expired(),
    ]),
  };
}

/** A random Task session: mostly valid traffic with rejected messages mixed in. */
export function randomTaskEvents(rand: () => number, length: number): SessionEvent[] {
  const people = [BOB, CAROL];
  const makers: (() => SessionEvent)[] = [
    () => task.request(pick(rand, [BOB, CAROL, ""]), pick(rand, ["t1", "t1", "t2"])),
    () => task.accept(pick(rand, people), pick(rand, ["t1", "t1", "t2"])),
    () => task.reject(pick(rand, people), rand() < 0.5),
    () => task.update(Math.round(rand() * 120) / 100, pick(rand, people)),
    () => task.update(Math.round(rand() * 100) / 100, pick(rand, people)),
    () => task.update(Math.round(rand() * 100) / 100, pick(rand, people)),
    () => (rand() < 0.5 ? task.complete(pick(rand, people)) : task.fail(rand() < 0.5, pick(rand, people))),
    () => (rand() < 0.25 ? task.commit(pick(rand, ["task.completed", "task.failed"]), rand() < 0.6) : task.update(0.5)),
    () => pick(rand, [task.suspend, task.resume, task.cancel, task.expired, task.garbage, task.unknown])(),
  ];
  const events = rand() < 0.9 ? [task.start()] : [];
  while (events.length < length) events.push(pick(rand, makers)());
  return sequenced(events);
}

// ---------------------------------------------------------------------------
// Batches

/** Ways to cut `n` items into consecutive batches: fixed sizes plus `randomCount` seeded random cuts (some empty). */
export function splits(n: number, rand: () => number, randomCount = 12): number[][] {
  const out: number[][] = [[n], [...Array(n).fill(1)]];
  for (const size of [2, 3, 5, 8]) {
    const sizes: number[] = [];
    for (let left = n; left > 0; left -= size) sizes.push(Math.min(size, left));
    out.push(sizes);
  }
  for (let k = 0; k < randomCount; k++) {
    const sizes: number[] = [];
    let left = n;
    while (left > 0) {
      const size = Math.min(left, Math.floor(rand() * 9)); // 0..8; 0 is an empty batch
      sizes.push(size);
      left -= size;
    }
    out.push(sizes);
  }
  return out;
}

/** Consecutive slices of `items` with the given sizes. */
export function cut<T>(items: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  let at = 0;
  for (const size of sizes) {
    out.push(items.slice(at, at + size));
    at += size;
  }
  return out;
}

/**
 * Object.freeze the whole object graph, so any write into it throws (the
 * modules are strict). Typed arrays cannot be frozen and are left alone.
 */
export function deepFreeze<T>(value: T, seen = new Set<object>()): T {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value) || seen.has(value)) return value;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key], seen);
  Object.freeze(value);
  return value;
}

/**
 * Which objects of `after` are the very objects found at the same place in
 * `before` ("same") and which are new ("new"); parts under a "same" object
 * are not listed. Two folds that share and copy the same parts give the same
 * list.
 */
export function identityMap(before: unknown, after: unknown, path = "$", out: string[] = []): string[] {
  if (typeof after !== "object" || after === null) return out;
  if (after === before) {
    out.push(`${path}: same`);
    return out;
  }
  out.push(`${path}: new`);
  if (ArrayBuffer.isView(after)) return out;
  const prev = typeof before === "object" && before !== null ? (before as Record<string, unknown>) : undefined;
  for (const key of Object.keys(after)) {
    identityMap(prev?.[key], (after as Record<string, unknown>)[key], `${path}.${key}`, out);
  }
  return out;
}
