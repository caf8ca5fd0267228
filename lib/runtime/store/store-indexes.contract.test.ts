// The store contract, continued: the session index and the message-id index
// (rows per session, summaries, lookups, paging), run against both stores.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidRecordError } from "./common";
import { brief, briefIndex, env, HARNESSES, msg, note, summary, type Harness, type TestStore } from "./__fixtures__/store-contract-kit";
import type { SessionStatus, Store } from "./types";

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

  describe("indexes", () => {
    it("keeps one index row per session with its first position, last seq and latest summary", async () => {
      expect(store.getSession("a")).toBeUndefined();
      await store.append([msg("a", 1), msg("a", 2)], [summary("a", "open", 10)]);
      await store.append([msg("b", 1)]);
      await store.append([note("a", "suspend")], [summary("a", "suspended", 20)]);
      await store.append([msg("b", 2), note("a", "resume"), msg("a", 3)], [summary("b", "open", 30), summary("a", "open", 30)]);
      await store.append([note("a", "cancel")], [summary("a", "cancelled", 40, "a:final")]);
      expect(briefIndex(store, "a")).toBe("a:1:3:cancelled:a:final");
      expect(store.getSession("a")?.activityMs).toBe(40);
      expect(briefIndex(store, "b")).toBe("b:3:2:open:b:open");
      expect(briefIndex(store, "nope")).toBe("none");
      // A session written without a summary has none yet: it counts as resident.
      await store.append([env("c", 1)]);
      expect(briefIndex(store, "c")).toBe("c:9:1:null:-");
      // Envelopes without a summary leave the row as it was (its last seq is as of the last summary)...
      await store.append([msg("b", 3)]);
      expect(briefIndex(store, "b")).toBe("b:3:2:open:b:open");
      // ...while writes are still checked against the newest seq.
      await expect(store.append([msg("b", 3, "again")])).rejects.toBeInstanceOf(InvalidRecordError);
      await store.append([msg("b", 4)], [summary("b", "resolved", 50)]);
      expect(briefIndex(store, "b")).toBe("b:3:4:resolved:b:resolved");
    });

    it("lists sessions in the order they started, by keyset pages, resident ones alone on request", async () => {
      await store.append(
        [msg("s1", 1), msg("s2", 1), msg("s3", 1), msg("s4", 1)],
        [summary("s1", "open"), summary("s2", "resolved"), summary("s3", "suspended"), summary("s4", "expired")],
      );
      await store.append([msg("s1", 2), msg("s5", 1)], [summary("s5", "cancelled")]);
      await store.append([env("s6", 1)]);
      const ids = (rows: { sessionId: string }[]) => rows.map((r) => r.sessionId);
      expect(ids(store.listSessions({ afterPosition: 0, limit: 100 }))).toEqual(["s1", "s2", "s3", "s4", "s5", "s6"]);
      const first = store.listSessions({ afterPosition: 0, limit: 2 });
      expect(ids(first)).toEqual(["s1", "s2"]);
      expect(ids(store.listSessions({ afterPosition: (first[1] as { firstPosition: number }).firstPosition, limit: 2 }))).toEqual([
        "s3",
        "s4",
      ]);
      expect(ids(store.listSessions({ afterPosition: 0, limit: 100, maxPosition: 4 }))).toEqual(["s1", "s2", "s3", "s4"]);
      expect(ids(store.listSessions({ afterPosition: 0, limit: 100, residentOnly: true }))).toEqual(["s1", "s3", "s6"]);
      expect(ids(store.listSessions({ afterPosition: 1, limit: 1, residentOnly: true }))).toEqual(["s3"]);
      expect(store.lastPosition()).toBe(7);
    });

    it("records accepted message ids per session and refuses a repeat", async () => {
      await store.append([msg("a", 1, "start"), msg("a", 2, "offer")], [summary("a", "open")]);
      await store.append([msg("b", 1, "start")]);
      expect(store.hasMessage("a", "start")).toBe(true);
      expect(store.hasMessage("a", "offer")).toBe(true);
      expect(store.hasMessage("a", "other")).toBe(false);
      expect(store.hasMessage("b", "offer")).toBe(false);
      expect(store.hasMessage("nope", "start")).toBe(false);
      const repeats = await Promise.allSettled([
        store.append([msg("a", 3, "offer")]),
        store.append([msg("c", 1, "x"), msg("c", 2, "x")]),
        store.append([{ ...note("a", "cancel"), messageId: "ann" }]),
      ]);
      for (const r of repeats) {
        expect(r.status).toBe("rejected");
        if (r.status === "rejected") expect(r.reason).toBeInstanceOf(InvalidRecordError);
      }
      // Queued but not yet committed ids count too.
      const queued = [store.append([msg("a", 3, "next")]), store.append([msg("a", 4, "next")])];
      const settled = await Promise.allSettled(queued);
      expect(settled.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
      expect(store.readSession("a", 0).map((r) => r.seq)).toEqual([1, 2, 3]);
    });

    it("refuses annotations and summaries for a session that has no records", async () => {
      const refused = await Promise.allSettled([
        store.append([note("ghost", "cancel")]),
        store.append([], [summary("ghost", "resolved")]),
        store.append([env("q", 1)], [summary("q2", "open")]),
        store.append([env("q", 1)], [{ ...summary("q", "open"), status: "bogus" as SessionStatus }]),
      ]);
      for (const r of refused) {
        expect(r.status).toBe("rejected");
        if (r.status === "rejected") expect(r.reason).toBeInstanceOf(InvalidRecordError);
      }
      expect(store.loadAll()).toEqual([]);
      expect(store.getSession("q")).toBeUndefined();
    });

    it("a failed commit leaves the indexes as they were", async () => {
      await store.append([msg("a", 1, "start")], [summary("a", "open")]);
      store.__failNextCommitForTests();
      const failed = await Promise.allSettled([
        store.append([msg("a", 2, "offer")], [summary("a", "resolved")]),
        store.append([msg("b", 1, "start")], [summary("b", "open")]),
      ]);
      expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
      expect(briefIndex(store, "a")).toBe("a:1:1:open:a:open");
      expect(store.getSession("b")).toBeUndefined();
      expect(store.hasMessage("a", "offer")).toBe(false);
      await store.append([msg("a", 2, "offer")], [summary("a", "resolved")]);
      expect(briefIndex(store, "a")).toBe("a:1:2:resolved:a:resolved");
    });

    it("adds summaries and message ids to sessions already written (indexSessions)", async () => {
      await store.append([env("a", 1), env("a", 2), note("a", "expire")]);
      await store.indexSessions([{ summary: summary("a", "expired"), messageIds: ["start", "offer"] }]);
      expect(briefIndex(store, "a")).toBe("a:1:2:expired:a:expired");
      expect(store.hasMessage("a", "offer")).toBe(true);
      expect(store.listSessions({ afterPosition: 0, limit: 10, residentOnly: true })).toEqual([]);
      await expect(store.indexSessions([{ summary: summary("zz", "open"), messageIds: [] }])).rejects.toBeInstanceOf(InvalidRecordError);
      await expect(store.indexSessions([{ summary: summary("a", "expired"), messageIds: ["offer"] }])).rejects.toBeInstanceOf(
        InvalidRecordError,
      );
    });

    it("reads history in pages bounded by count, bytes and a last seq", async () => {
      const big = "x".repeat(1000);
      await store.append([1, 2, 3, 4, 5, 6].map((seq) => env("a", seq, `${seq}${big}`)));
      const seqs = (after: number, page: Parameters<Store["readSession"]>[2]) => store.readSession("a", after, page).map((r) => r.seq);
      expect(seqs(0, { maxRecords: 4 })).toEqual([1, 2, 3, 4]);
      expect(seqs(4, { maxRecords: 4 })).toEqual([5, 6]);
      // The record that crosses the byte limit is included, so every page makes progress.
      expect(seqs(0, { maxBytes: 2500 })).toEqual([1, 2, 3]);
      expect(seqs(0, { maxBytes: 1 })).toEqual([1]);
      expect(seqs(1, { upToSeq: 3 })).toEqual([2, 3]);
      expect(seqs(3, { upToSeq: 3 })).toEqual([]);
      expect(seqs(0, { maxRecords: 0 })).toEqual([1]);
    });

    it("reads every record of one session, annotations included, in commit order", async () => {
      await store.append([env("a", 1), env("b", 1), note("a", "suspend")]);
      await store.append([note("a", "resume"), env("b", 2), env("a", 2), note("a", "cancel")]);
      expect(brief([...store.sessionRecords("a")])).toEqual([
        "1:a:envelope:1:a#1",
        "3:a:suspend:0:a:suspend",
        "4:a:resume:0:a:resume",
        "6:a:envelope:2:a#2",
        "7:a:cancel:0:a:cancel",
      ]);
      expect([...store.sessionRecords("nope")]).toEqual([]);
    });

    it("counts what it was asked to read", async () => {
      await store.append([msg("a", 1), msg("a", 2)], [summary("a", "open")]);
      const before = store.readStats();
      store.getSession("a");
      store.listSessions({ afterPosition: 0, limit: 10 });
      store.hasMessage("a", "a-m1");
      store.readSession("a", 0);
      void [...store.sessionRecords("a")];
      const after = store.readStats();
      expect(after.indexRows - before.indexRows).toBe(2);
      expect(after.messageLookups - before.messageLookups).toBe(1);
      expect(after.records - before.records).toBe(4);
      expect(after.envelopeBytes - before.envelopeBytes).toBe(4 * "a#1".length);
    });

    it("keeps the indexes across a reopen", async () => {
      await store.append([msg("a", 1, "start"), msg("a", 2, "offer")], [summary("a", "resolved")]);
      await store.append([msg("b", 1, "start")], [summary("b", "open")]);
      await store.close();
      const again = h.reopen();
      if (!again) return;
      store = again;
      expect(briefIndex(store, "a")).toBe("a:1:2:resolved:a:resolved");
      expect(store.hasMessage("a", "offer")).toBe(true);
      expect(store.listSessions({ afterPosition: 0, limit: 10, residentOnly: true }).map((r) => r.sessionId)).toEqual(["b"]);
      await expect(store.append([msg("b", 2, "start")])).rejects.toBeInstanceOf(InvalidRecordError);
      await store.append([msg("b", 2, "offer")], [summary("b", "open", 60)]);
      expect(briefIndex(store, "b")).toBe("b:3:2:open:b:open");
    });
  });
});
