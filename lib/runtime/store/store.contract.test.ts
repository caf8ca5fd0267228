// One behavioural contract, run against both stores: records, policies,
// group commit and failures. Its index and list-row parts are
// store-indexes.contract.test.ts and store-list-rows.contract.test.ts.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidRecordError, StoreFailedError } from "./common";
import {
  brief,
  briefPolicies,
  env,
  HARNESSES,
  nextTurn,
  note,
  policy,
  type Harness,
  type TestStore,
} from "./__fixtures__/store-contract-kit";
import type { LogRecord, RecordKind, StoredRecord } from "./types";

const enc = new TextEncoder();
const dec = new TextDecoder();

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
});
