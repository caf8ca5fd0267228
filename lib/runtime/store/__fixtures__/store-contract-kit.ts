// What the store contract's test files share (store.contract.test.ts,
// store-indexes.contract.test.ts, store-list-rows.contract.test.ts): the two
// stores behind one harness, every test's records and summaries, and the
// brief string forms the assertions compare.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { StoreStats } from "../common";
import { openMemoryStore } from "../memory";
import { openSqliteStore } from "../sqlite";
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
} from "../types";

export type TestStore = Store & { stats(): StoreStats; __failNextCommitForTests(error?: Error): void };

export interface Harness {
  name: string;
  open(): TestStore;
  /** Open the same data again after close(); null when nothing persists. */
  reopen(): TestStore | null;
  /** Error code of the default injected fault, if the backend produces one. */
  faultCode: string | null;
  cleanup(): void;
}

export function memoryHarness(): Harness {
  return {
    name: "memory",
    open: () => openMemoryStore(),
    reopen: () => null,
    faultCode: null,
    cleanup: () => {},
  };
}

export function sqliteHarness(): Harness {
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

export function env(sessionId: string, seq: number, text = `${sessionId}#${seq}`): LogRecord {
  return { sessionId, kind: "envelope", seq, recvMs: 1_700_000_000_000 + seq, envelope: enc.encode(text) };
}

export function note(sessionId: string, kind: Exclude<RecordKind, "envelope">, text = `${sessionId}:${kind}`): LogRecord {
  return { sessionId, kind, seq: 0, recvMs: 1_700_000_000_500, envelope: enc.encode(text) };
}

/** An envelope record that also indexes its message id. */
export function msg(sessionId: string, seq: number, messageId = `${sessionId}-m${seq}`, text?: string): LogRecord {
  return { ...env(sessionId, seq, text), messageId };
}

export function summary(
  sessionId: string,
  status: SessionStatus,
  activityMs = 1_700_000_000_900,
  text = `${sessionId}:${status}`,
): SessionSummary {
  return { sessionId, status, activityMs, metadata: enc.encode(text) };
}

/** sessionId:firstPosition:lastSeq:status:metadata-text */
export function briefIndex(store: Store, sessionId: string): string {
  const e = store.getSession(sessionId);
  if (!e) return "none";
  return `${e.sessionId}:${e.firstPosition}:${e.lastSeq}:${e.status}:${e.metadata === null ? "-" : dec.decode(e.metadata)}`;
}

export function row(sessionId: string, text: string, final = false, nextActors: string[] = []): ListRow {
  return { sessionId, summary: enc.encode(text), nextActors, final };
}

/** change:session:summary-text:final:actors */
export function briefRows(rows: readonly StoredListRow[]): string[] {
  return rows.map((r) => `${r.change}:${r.sessionId}:${dec.decode(r.summary)}:${r.final ? "final" : "-"}:${r.nextActors.join(",")}`);
}

export function policy(policyId: string, text = policyId): PolicyRecord {
  return { policyId, descriptor: enc.encode(text) };
}

/** position:session:kind:seq:envelope-text */
export function brief(records: readonly StoredRecord[]): string[] {
  return records.map((r) => `${r.position}:${r.sessionId}:${r.kind}:${r.seq}:${dec.decode(r.envelope)}`);
}

export function briefPolicies(policies: readonly PolicyRecord[]): string[] {
  return policies.map((p) => `${p.policyId}=${dec.decode(p.descriptor)}`);
}

export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The stores the contract runs against, for describe.each. */
export const HARNESSES = [
  ["memory", memoryHarness],
  ["sqlite", sqliteHarness],
] as const;
