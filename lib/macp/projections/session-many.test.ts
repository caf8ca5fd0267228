import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { appended, Draft, replacedAt, writable } from "@/lib/macp/projections/draft";
import { handoffFromEvents, initialHandoffState, reduceHandoff } from "@/lib/macp/projections/handoff";
import { emptySessionView, reduceSession, reduceSessionMany, viewFromEvents, type SessionView } from "@/lib/macp/projections/session";
import { initialTaskState, reduceTask, taskFromEvents } from "@/lib/macp/projections/task";
import {
  BOB,
  cut,
  deepFreeze,
  handoffScenarios,
  identityMap,
  prng,
  randomHandoffEvents,
  randomTaskEvents,
  splits,
  taskScenarios,
} from "@/lib/macp/projections/testing/fold-scenarios";
import type { SessionEvent } from "@/lib/macp/projections/types";

const oneByOne = (view: SessionView, events: readonly SessionEvent[]): SessionView => events.reduce((v, e) => reduceSession(v, e), view);

/**
 * Fold `events` batch by batch with reduceSessionMany, and check each batch
 * against reduceSession one event at a time from the same (frozen) input:
 * equal results, the same parts shared with and copied from the input, and
 * the input left as it was.
 */
function checkSplit(initial: SessionView, events: readonly SessionEvent[], sizes: readonly number[]): SessionView {
  let view = initial;
  for (const batch of cut(events, sizes)) {
    const snapshot = structuredClone(view);
    const input = deepFreeze(view);
    const expected = oneByOne(input, batch);
    const got = reduceSessionMany(input, batch);
    expect(got).toStrictEqual(expected);
    expect(identityMap(input, got)).toEqual(identityMap(input, expected));
    expect(input).toStrictEqual(snapshot);
    view = got;
  }
  return view;
}

const scenarios: [string, SessionEvent[]][] = [
  ...Object.entries(handoffScenarios()).map(([name, events]): [string, SessionEvent[]] => [`handoff: ${name}`, events]),
  ...Object.entries(taskScenarios()).map(([name, events]): [string, SessionEvent[]] => [`task: ${name}`, events]),
];

describe("reduceSessionMany", () => {
  it.each(scenarios)("%s: equals folding one by one, for every split, without touching its input", (_name, events) => {
    const rand = prng(events.length);
    const whole = oneByOne(emptySessionView(), events);
    for (const sizes of splits(events.length, rand)) {
      expect(checkSplit(emptySessionView(), events, sizes)).toStrictEqual(whole);
    }
  });

  it("holds for seeded random interleavings of handoff and task traffic", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = prng(seed);
      const handoffMode = seed % 2 === 1;
      const events = handoffMode ? randomHandoffEvents(rand, 20 + (seed % 40)) : randomTaskEvents(rand, 20 + (seed % 40));
      // Half start from a view that already knows its mode (the session page's case).
      const initial =
        seed % 4 < 2 ? emptySessionView() : emptySessionView(events[0]!.envelope.sessionId, handoffMode ? HANDOFF_MODE : TASK_MODE);
      const whole = oneByOne(initial, events);
      for (const sizes of splits(events.length, rand, 4)) {
        expect(checkSplit(initial, events, sizes), `seed ${seed}, batches ${sizes.join(",")}`).toStrictEqual(whole);
      }
    }
  });

  it("appends to lists it created and copies a received list once, on first write", () => {
    const [start, offer, ...contexts] = handoffScenarios()["offer, contexts, accept, late context, commitment"]!;
    const before = deepFreeze(reduceSessionMany(emptySessionView(), [start!, offer!, contexts[0]!]));
    const after = reduceSessionMany(before, contexts.slice(1, 3));
    expect(after.handoff?.offers[0]?.contexts).toHaveLength(3);
    expect(after.handoff?.offers[0]?.contexts[0]).toBe(before.handoff?.offers[0]?.contexts[0]);
    expect(after.handoff?.offers).not.toBe(before.handoff?.offers);
    expect(before.handoff?.offers[0]?.contexts).toHaveLength(1);
  });

  it("returns its input for an empty batch, and viewFromEvents folds in one batch", () => {
    const events = handoffScenarios()["implicit accept by commitment"]!;
    const v = viewFromEvents(events);
    expect(reduceSessionMany(v, [])).toBe(v);
    expect(v).toStrictEqual(oneByOne(emptySessionView(), events));
    expect(v.currentOwner).toBe(BOB);
  });
});

describe("handoffFromEvents and taskFromEvents (batch folds)", () => {
  it("equal reduceHandoff / reduceTask one by one", () => {
    for (const events of Object.values(handoffScenarios())) {
      expect(handoffFromEvents(events)).toStrictEqual(events.reduce((s, e) => reduceHandoff(s, e), initialHandoffState));
    }
    for (const events of Object.values(taskScenarios())) {
      expect(taskFromEvents(events)).toStrictEqual(events.reduce((s, e) => reduceTask(s, e), initialTaskState));
    }
  });
});

describe("Draft", () => {
  it("writes in place only what it created, and copies anything else once", () => {
    const d = new Draft();
    const received = Object.freeze({ a: 1 });
    const mine = writable(d, received);
    expect(mine).not.toBe(received);
    expect(writable(d, mine)).toBe(mine);
    expect(writable(undefined, mine)).not.toBe(mine);

    const list = Object.freeze([1, 2]) as readonly number[];
    const grown = appended(d, list, 3);
    expect(grown).toEqual([1, 2, 3]);
    expect(appended(d, grown, 4)).toBe(grown);
    expect(grown).toEqual([1, 2, 3, 4]);
    expect(list).toEqual([1, 2]);
    expect(appended(undefined, grown, 5)).not.toBe(grown);

    const replaced = replacedAt(d, list, 0, 9);
    expect(replaced).toEqual([9, 2]);
    expect(replacedAt(d, replaced, 1, 8)).toBe(replaced);
    expect(replaced).toEqual([9, 8]);
    expect(replacedAt(undefined, list, 0, 1)).toBe(list);
    expect(new Draft().owns(grown)).toBe(false);
  });
});
