// The store contract, continued: list rows (each session's console row,
// numbered by a store-wide change counter) and their backfill, run against
// both stores.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidRecordError } from "./common";
import { briefRows, HARNESSES, msg, note, row, summary, type Harness, type TestStore } from "./__fixtures__/store-contract-kit";

describe.each(HARNESSES)("%s store contract", (_name, make) => {
  let h: Harness;
  let store: TestStore;

  beforeEach(() => {
    h = make();
    store = h.open();
  });

  afterEach(async () => {
    await store.close().catch(() => undefined);
    h.cleanup();
  });

  describe("list rows", () => {
    it("has an identity, no rows and nothing to backfill when new", () => {
      expect(store.storeId).toMatch(/^[0-9a-f-]{36}$/);
      expect(store.lastListChange()).toBe(0);
      expect(store.readListRows(0, 10)).toEqual([]);
      expect(store.listRowsBackfilled()).toBe(true);
    });

    it("numbers rows in commit order, keeps each session's newest, and pages by change", async () => {
      await store.append([msg("a", 1)], [summary("a", "open")], [row("a", "a1", false, ["agent://t"])]);
      await store.append([msg("b", 1)], [summary("b", "open")], [row("b", "b1")]);
      // One event-loop turn, one transaction: changes follow call order.
      const p1 = store.append([msg("a", 2)], undefined, [row("a", "a2")]);
      const p2 = store.append([msg("c", 1)], [summary("c", "open")], [row("c", "c1")]);
      await Promise.all([p1, p2]);
      await store.append([note("b", "cancel")], [summary("b", "cancelled")], [row("b", "b-done", true)]);
      expect(store.lastListChange()).toBe(5);
      expect(briefRows(store.readListRows(0, 10))).toEqual(["3:a:a2:-:", "4:c:c1:-:", "5:b:b-done:final:"]);
      expect(briefRows(store.readListRows(3, 1))).toEqual(["4:c:c1:-:"]);
      expect(briefRows(store.readListRows(1, 10))).toEqual(["3:a:a2:-:", "4:c:c1:-:", "5:b:b-done:final:"]);
      expect(store.readListRows(5, 10)).toEqual([]);
      expect(() => store.readListRows(-1, 10)).toThrow(RangeError);
      expect(() => store.readListRows(0, 0)).toThrow(RangeError);
    });

    it("tells listeners about durable rows, in change order, before the appends resolve", async () => {
      const seen: string[][] = [];
      const stop = store.onListRows((rows) => seen.push(briefRows(rows)));
      let resolved = 0;
      const p1 = store.append([msg("a", 1)], [summary("a", "open")], [row("a", "a1", false, ["agent://t"])]).then(() => {
        resolved++;
        expect(seen).toHaveLength(1);
      });
      const p2 = store.append([msg("b", 1)], [summary("b", "open")], [row("b", "b1")]);
      await Promise.all([p1, p2]);
      expect(resolved).toBe(1);
      await store.append([msg("a", 2)]);
      stop();
      await store.append([msg("a", 3)], undefined, [row("a", "a3")]);
      expect(seen).toEqual([["1:a:a1:-:agent://t", "2:b:b1:-:"]]);
    });

    it("writes nothing and tells nobody when the commit fails", async () => {
      const seen: number[] = [];
      store.onListRows((rows) => seen.push(...rows.map((r) => r.change)));
      await store.append([msg("a", 1)], [summary("a", "open")], [row("a", "a1")]);
      store.__failNextCommitForTests();
      await expect(store.append([msg("a", 2)], undefined, [row("a", "a2")])).rejects.toThrow();
      expect(store.lastListChange()).toBe(1);
      await store.append([msg("a", 2)], undefined, [row("a", "a2-again")]);
      expect(briefRows(store.readListRows(0, 10))).toEqual(["2:a:a2-again:-:"]);
      expect(seen).toEqual([1, 2]);
    });

    it("refuses malformed rows and rows without records in the same append", async () => {
      await expect(store.append([msg("a", 1)], undefined, [row("b", "x")])).rejects.toBeInstanceOf(InvalidRecordError);
      await expect(store.append([msg("a", 1)], undefined, [row("a", "x"), row("a", "y")])).rejects.toBeInstanceOf(InvalidRecordError);
      await expect(store.append([msg("a", 1)], undefined, [{ ...row("a", "x"), nextActors: [""] }])).rejects.toBeInstanceOf(
        InvalidRecordError,
      );
      await expect(
        store.append([msg("a", 1)], undefined, [{ ...row("a", "x"), final: "yes" as unknown as boolean }]),
      ).rejects.toBeInstanceOf(InvalidRecordError);
      expect(store.loadAll()).toEqual([]);
      expect(store.lastListChange()).toBe(0);
    });

    it("backfills only sessions without a row, and finds them by first position", async () => {
      await store.append([msg("a", 1)], [summary("a", "resolved")]);
      await store.append([msg("b", 1)], [summary("b", "open")], [row("b", "b1")]);
      await store.append([msg("c", 1)], [summary("c", "open")]);
      expect(store.sessionsWithoutListRow(0, 10).map((e) => e.sessionId)).toEqual(["a", "c"]);
      expect(store.sessionsWithoutListRow(1, 10).map((e) => e.sessionId)).toEqual(["c"]);
      expect(store.sessionsWithoutListRow(0, 1).map((e) => e.sessionId)).toEqual(["a"]);
      // c's own write comes first in the same transaction: the backfill leaves it alone.
      const p1 = store.append([msg("c", 2)], undefined, [row("c", "c2")]);
      const p2 = store.backfillListRows([row("a", "a-fold", true), row("b", "b-fold"), row("c", "c-fold")]);
      await Promise.all([p1, p2]);
      expect(briefRows(store.readListRows(0, 10))).toEqual(["1:b:b1:-:", "2:c:c2:-:", "3:a:a-fold:final:"]);
      expect(store.sessionsWithoutListRow(0, 10)).toEqual([]);
    });

    it("keeps rows, the change counter and the identity across a reopen", async () => {
      const id = store.storeId;
      await store.append([msg("a", 1)], [summary("a", "open")], [row("a", "a1", false, ["agent://x", "agent://y"])]);
      await store.append([msg("a", 2)], [summary("a", "resolved")], [row("a", "a2", true)]);
      await store.close();
      const again = h.reopen();
      if (!again) return;
      store = again;
      expect(store.storeId).toBe(id);
      expect(store.lastListChange()).toBe(2);
      expect(briefRows(store.readListRows(0, 10))).toEqual(["2:a:a2:final:"]);
      await store.append([msg("b", 1)], [summary("b", "open")], [row("b", "b1", false, ["agent://x", "agent://y"])]);
      expect(briefRows(store.readListRows(2, 10))).toEqual(["3:b:b1:-:agent://x,agent://y"]);
    });
  });
});
