// One behavioural contract, run against both stores.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidRecordError, StoreFailedError, type StoreStats } from "./common";
import { openMemoryStore } from "./memory";
import { openSqliteStore } from "./sqlite";
import type {
  ListRow,
  LogRecord,
  PolicyRecord,
  RecordKind,
  SessionStatus,
  SessionSummary,
  Store,
  StoredListRow,
  StoredRecord,
} from "./types";

type TestStore = Store & { stats(): StoreStats; __failNextCommitForTests(error?: Error): void };

interface Harness {
  name: string;
  open(): TestStore;
  /** Open the same data again after close(); null when nothing persists. */
  reopen(): TestStore | null;
  /** Error code of the default injected fault, if the backend produces one. */
  faultCode: string | null;
  cleanup(): void;
}

function memoryHarness(): Harness {
  return {
    name: "memory",
    open: () => openMemoryStore(),
    reopen: () => null,
    faultCode: null,
    cleanup: () => {},
  };
}

function sqliteHarness(): Harness {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-store-contract-"));
  return {
    name: "sqlite",
    open: () => openSqliteStore({ dir }),
    reopen: () => openSqliteStore({ dir }),
    faultCode: "SQLITE_CONSTRAINT_CHECK",
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function env(sessionId: string, seq: number, text = `${sessionId}#${seq}`): LogRecord {
  return { sessionId, kind: "envelope", seq, recvMs: 1_700_000_000_000 + seq, envelope: enc.encode(text) };
}

function note(sessionId: string, kind: Exclude<RecordKind, "envelope">, text = `${sessionId}:${kind}`): LogRecord {
  return { sessionId, kind, seq: 0, recvMs: 1_700_000_000_500, envelope: enc.encode(text) };
}

/** An envelope record that also indexes its message id. */
function msg(sessionId: string, seq: number, messageId = `${sessionId}-m${seq}`, text?: string): LogRecord {
  return { ...env(sessionId, seq, text), messageId };
}

function summary(
  sessionId: string,
  status: SessionStatus,
  activityMs = 1_700_000_000_900,
  text = `${sessionId}:${status}`,
): SessionSummary {
  return { sessionId, status, activityMs, metadata: enc.encode(text) };
}

/** sessionId:firstPosition:lastSeq:status:metadata-text */
function briefIndex(store: Store, sessionId: string): string {
  const e = store.getSession(sessionId);
  if (!e) return "none";
  return `${e.sessionId}:${e.firstPosition}:${e.lastSeq}:${e.status}:${e.metadata === null ? "-" : dec.decode(e.metadata)}`;
}

function row(sessionId: string, text: string, final = false, nextActors: string[] = []): ListRow {
  return { sessionId, summary: enc.encode(text), nextActors, final };
}

/** change:session:summary-text:final:actors */
function briefRows(rows: readonly StoredListRow[]): string[] {
  return rows.map((r) => `${r.change}:${r.sessionId}:${dec.decode(r.summary)}:${r.final ? "final" : "-"}:${r.nextActors.join(",")}`);
}

function policy(policyId: string, text = policyId): PolicyRecord {
  return { policyId, descriptor: enc.encode(text) };
}

/** position:session:kind:seq:envelope-text */
function brief(records: readonly StoredRecord[]): string[] {
  return records.map((r) => `${r.position}:${r.sessionId}:${r.kind}:${r.seq}:${dec.decode(r.envelope)}`);
}

function briefPolicies(policies: readonly PolicyRecord[]): string[] {
  return policies.map((p) => `${p.policyId}=${dec.decode(p.descriptor)}`);
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe.each([
  ["memory", memoryHarness],
  ["sqlite", sqliteHarness],
] as const)("%s store contract", (_name, make) => {
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

  it("starts empty", () => {
    expect(store.loadAll()).toEqual([]);
    expect(store.loadPolicies()).toEqual([]);
    expect(store.readSession("s", 0)).toEqual([]);
    expect(store.stats()).toEqual({ transactions: 0, records: 0, policyWrites: 0, failedTransactions: 0 });
  });

  it("returns records in commit order with increasing positions and exact contents", async () => {
    const start: LogRecord = { ...env("a", 1), boundPolicy: enc.encode("bound-policy") };
    await store.append([start, env("a", 2)]);
    await store.append([env("b", 1, ""), note("a", "suspend")]);
    await store.append([note("a", "resume"), env("a", 3), env("b", 2)]);

    const all = store.loadAll();
    expect(brief(all)).toEqual([
      "1:a:envelope:1:a#1",
      "2:a:envelope:2:a#2",
      "3:b:envelope:1:",
      "4:a:suspend:0:a:suspend",
      "5:a:resume:0:a:resume",
      "6:a:envelope:3:a#3",
      "7:b:envelope:2:b#2",
    ]);
    const first = all[0] as StoredRecord;
    expect(first.recvMs).toBe(1_700_000_000_001);
    expect(first.envelope).toBeInstanceOf(Uint8Array);
    expect(dec.decode(first.boundPolicy)).toBe("bound-policy");
    expect(all.slice(1).every((r) => r.boundPolicy === undefined)).toBe(true);
    expect((all[2] as StoredRecord).envelope.length).toBe(0);
  });

  it("keeps private copies of written and returned bytes", async () => {
    const r = env("a", 1, "original");
    const p = store.append([r]);
    r.envelope.fill(0x21); // caller reuses its buffer before the commit
    await p;
    const loaded = store.loadAll()[0] as StoredRecord;
    expect(dec.decode(loaded.envelope)).toBe("original");
    loaded.envelope.fill(0x21);
    expect(dec.decode((store.loadAll()[0] as StoredRecord).envelope)).toBe("original");
    expect(dec.decode((store.readSession("a", 0)[0] as StoredRecord).envelope)).toBe("original");

    const pol = policy("p", "descriptor");
    const q = store.putPolicy(pol);
    pol.descriptor.fill(0x21);
    await q;
    expect(briefPolicies(store.loadPolicies())).toEqual(["p=descriptor"]);
  });

  it("groups all writes of one event-loop turn into one transaction", async () => {
    await Promise.all([
      store.append([env("a", 1)]),
      store.append([env("b", 1), env("b", 2)]),
      store.append([env("a", 2)]),
      store.putPolicy(policy("p")),
    ]);
    expect(store.stats()).toEqual({ transactions: 1, records: 4, policyWrites: 1, failedTransactions: 0 });

    // Writes made in separate turns commit separately.
    await store.append([env("a", 3)]);
    await store.append([env("a", 4)]);
    expect(store.stats()).toEqual({ transactions: 3, records: 6, policyWrites: 1, failedTransactions: 0 });

    // Writes made from within a group's resolution join the next group.
    const second: Promise<void>[] = [];
    await store.append([env("c", 1)]).then(() => {
      second.push(store.append([env("c", 2)]), store.append([env("c", 3)]));
    });
    await Promise.all(second);
    expect(store.stats().transactions).toBe(5);
    expect(brief(store.readSession("c", 0)).map((s) => s.split(":").slice(1, 4).join(":"))).toEqual([
      "c:envelope:1",
      "c:envelope:2",
      "c:envelope:3",
    ]);
  });

  it("settles writes in call order, only after their data is committed", async () => {
    const events: string[] = [];
    const visibleAtResolve: number[] = [];
    const writes = [
      store.append([env("a", 1)]).then(() => {
        events.push("append a1");
        visibleAtResolve.push(store.loadAll().length);
      }),
      store.putPolicy(policy("p")).then(() => events.push("put p")),
      store.append([env("a", 2), env("a", 3)]).then(() => events.push("append a2-3")),
      store.deletePolicy("p").then(() => events.push("delete p")),
      store.append([env("b", 1)]).then(() => events.push("append b1")),
    ];
    // Nothing is visible before the group commits.
    expect(store.loadAll()).toEqual([]);
    expect(events).toEqual([]);
    await Promise.all(writes);
    expect(events).toEqual(["append a1", "put p", "append a2-3", "delete p", "append b1"]);
    // The whole group was committed when the first promise resolved.
    expect(visibleAtResolve).toEqual([4]);
    expect(store.loadPolicies()).toEqual([]);
  });

  it("commits one append call atomically and in order", async () => {
    await store.append([env("a", 1), note("a", "cancel"), env("b", 1), env("a", 2)]);
    expect(brief(store.loadAll())).toEqual(["1:a:envelope:1:a#1", "2:a:cancel:0:a:cancel", "3:b:envelope:1:b#1", "4:a:envelope:2:a#2"]);
  });

  it("a failed commit rejects every write of the group and stores none of it", async () => {
    await Promise.all([store.append([env("a", 1)]), store.putPolicy(policy("keep", "v1"))]);
    const before = brief(store.loadAll());

    store.__failNextCommitForTests();
    const group = [
      store.append([env("a", 2)]),
      store.append([env("b", 1), env("b", 2)]),
      store.putPolicy(policy("keep", "v2")),
      store.putPolicy(policy("new")),
      store.deletePolicy("keep"),
      store.append([note("a", "suspend")]),
    ];
    const results = await Promise.allSettled(group);
    expect(results.map((r) => r.status)).toEqual(Array(group.length).fill("rejected"));
    const errors = results.map((r) => (r.status === "rejected" ? (r.reason as Error) : null));
    expect(new Set(errors).size).toBe(1); // one error, shared by the whole group
    if (h.faultCode) expect((errors[0] as Error & { code?: string }).code).toBe(h.faultCode);

    expect(brief(store.loadAll())).toEqual(before);
    expect(briefPolicies(store.loadPolicies())).toEqual(["keep=v1"]);
    expect(store.readSession("b", 0)).toEqual([]);
    expect(store.stats()).toEqual({ transactions: 1, records: 1, policyWrites: 1, failedTransactions: 1 });

    // The store keeps working, and the rejected seqs are free again.
    await Promise.all([store.append([env("a", 2)]), store.append([env("b", 1), env("b", 2)])]);
    expect(brief(store.loadAll())).toEqual([...before, "2:a:envelope:2:a#2", "3:b:envelope:1:b#1", "4:b:envelope:2:b#2"]);
    expect(store.stats().transactions).toBe(2);
  });

  it("refuses malformed writes individually, without affecting the rest of the group", async () => {
    await store.append([env("a", 1)]);
    const bad: Array<[string, Promise<void>]> = [
      ["gap", store.append([env("a", 3)])],
      ["repeat", store.append([env("a", 1)])],
      ["new session not at 1", store.append([env("z", 2)])],
      ["annotation seq", store.append([{ ...note("a", "cancel"), seq: 2 }])],
      ["envelope seq 0", store.append([{ ...env("a", 2), seq: 0 }])],
      ["kind", store.append([{ ...env("a", 2), kind: "bogus" as RecordKind }])],
      ["session", store.append([env("", 1)])],
      ["recvMs", store.append([{ ...env("q", 1), recvMs: 1.5 }])],
      ["envelope type", store.append([{ ...env("q", 1), envelope: "x" as unknown as Uint8Array }])],
      ["bound policy off start", store.append([{ ...env("a", 2), boundPolicy: new Uint8Array(1) }])],
      // One bad record refuses the whole call: a2 must not be stored.
      ["partly bad call", store.append([env("a", 2), env("a", 4)])],
      ["policy id", store.putPolicy(policy(""))],
      ["delete id", store.deletePolicy("")],
    ];
    const good = [store.append([env("a", 2)]), store.append([env("q", 1), env("q", 2)])];
    const results = await Promise.allSettled(bad.map(([, p]) => p));
    results.forEach((r, i) => {
      expect(r.status, (bad[i] as [string, unknown])[0]).toBe("rejected");
      if (r.status === "rejected") expect(r.reason).toBeInstanceOf(InvalidRecordError);
    });
    await Promise.all(good);
    expect(brief(store.loadAll())).toEqual(["1:a:envelope:1:a#1", "2:a:envelope:2:a#2", "3:q:envelope:1:q#1", "4:q:envelope:2:q#2"]);
    expect(store.stats()).toEqual({ transactions: 2, records: 4, policyWrites: 0, failedTransactions: 0 });
  });

  it("readSession returns one session's accepted envelopes after a seq, in order", async () => {
    await store.append([env("a", 1), env("b", 1), note("a", "suspend"), env("a", 2)]);
    await store.append([note("a", "resume"), env("b", 2), env("a", 3), note("a", "expire")]);
    const seqs = (sessionId: string, after: number): string[] =>
      store.readSession(sessionId, after).map((r) => `${r.sessionId}:${r.kind}:${r.seq}:${dec.decode(r.envelope)}`);

    expect(seqs("a", 0)).toEqual(["a:envelope:1:a#1", "a:envelope:2:a#2", "a:envelope:3:a#3"]);
    expect(seqs("a", 1)).toEqual(["a:envelope:2:a#2", "a:envelope:3:a#3"]);
    expect(seqs("a", 2)).toEqual(["a:envelope:3:a#3"]);
    expect(seqs("a", 3)).toEqual([]);
    expect(seqs("a", 99)).toEqual([]);
    expect(seqs("a", -5)).toHaveLength(3);
    expect(seqs("b", 1)).toEqual(["b:envelope:2:b#2"]);
    expect(seqs("nope", 0)).toEqual([]);
    expect(store.readSession("a", 1).map((r) => r.position)).toEqual([4, 7]);
    expect(() => store.readSession("a", Number.NaN)).toThrow(RangeError);
  });

  it("stores, replaces and deletes policies", async () => {
    await store.putPolicy(policy("zeta", "z1"));
    await store.putPolicy(policy("alpha", "a1"));
    await store.putPolicy(policy("Beta", "b1"));
    expect(briefPolicies(store.loadPolicies())).toEqual(["Beta=b1", "alpha=a1", "zeta=z1"]);

    await store.putPolicy(policy("alpha", "a2"));
    await store.deletePolicy("zeta");
    await store.deletePolicy("never-registered");
    expect(briefPolicies(store.loadPolicies())).toEqual(["Beta=b1", "alpha=a2"]);
    expect(store.stats().policyWrites).toBe(6);
    expect(store.loadAll()).toEqual([]);
  });

  it("close() flushes pending writes first, then refuses new ones", async () => {
    await store.append([env("a", 1)]);
    const order: string[] = [];
    const pending = [
      store.append([env("a", 2)]).then(() => order.push("a2")),
      store.putPolicy(policy("p")).then(() => order.push("p")),
      store.append([env("b", 1)]).then(() => order.push("b1")),
    ];
    const closed = store.close().then(() => order.push("closed"));
    await Promise.all([...pending, closed]);
    expect(order).toEqual(["a2", "p", "b1", "closed"]);
    expect(store.stats()).toEqual({ transactions: 2, records: 3, policyWrites: 1, failedTransactions: 0 });

    await expect(store.append([env("a", 3)])).rejects.toThrow(/closed/);
    await expect(store.putPolicy(policy("q"))).rejects.toThrow(/closed/);
    expect(() => store.loadAll()).toThrow(/closed/);
    await expect(store.close()).resolves.toBeUndefined();

    const again = h.reopen();
    if (again) {
      store = again;
      expect(brief(store.loadAll())).toEqual(["1:a:envelope:1:a#1", "2:a:envelope:2:a#2", "3:b:envelope:1:b#1"]);
      expect(briefPolicies(store.loadPolicies())).toEqual(["p=p"]);
      // Seq bookkeeping is rebuilt from what is stored.
      await expect(store.append([env("a", 2)])).rejects.toBeInstanceOf(InvalidRecordError);
      await store.append([env("a", 3)]);
      expect(store.readSession("a", 2).map((r) => r.position)).toEqual([4]);
    }
  });

  it("refuses every further write after an I/O error during commit", async () => {
    await store.append([env("a", 1)]);
    const ioError = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_FSYNC" });
    store.__failNextCommitForTests(ioError);
    await expect(store.append([env("a", 2)])).rejects.toBe(ioError);
    await nextTurn();
    const next = store.append([env("a", 2)]);
    await expect(next).rejects.toBeInstanceOf(StoreFailedError);
    await expect(store.putPolicy(policy("p"))).rejects.toBeInstanceOf(StoreFailedError);
    // Reads still work: the kernel can rebuild from what is stored.
    expect(brief(store.loadAll())).toEqual(["1:a:envelope:1:a#1"]);
    expect(store.stats()).toMatchObject({ transactions: 1, failedTransactions: 1 });
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
