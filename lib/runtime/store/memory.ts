// In-memory store (MACP_MEMORY_ONLY=1 and tests). Same group commit, same
// validation, same ordering and the same all-or-nothing batches as the SQLite
// store; only durability differs: everything is gone when the process exits.
import {
  checkAfterSeq,
  compareUtf8,
  LogVerifier,
  noopLogger,
  verifySessionRun,
  type StoreLogger,
  type StoreStats,
} from "./common";
import { GroupCommitWriter, type CommitBackend, type StoreOp } from "./writer";
import type { LogRecord, PolicyRecord, Store, StoredRecord } from "./types";

export interface MemoryStore extends Store {
  stats(): StoreStats;
  /** TEST ONLY. Makes the next commit fail (nothing of it applied), throwing `error` or a generic error. */
  __failNextCommitForTests(error?: Error): void;
}

function copyRecord(r: StoredRecord): StoredRecord {
  const out: StoredRecord = {
    position: r.position,
    sessionId: r.sessionId,
    kind: r.kind,
    seq: r.seq,
    recvMs: r.recvMs,
    envelope: r.envelope.slice(),
  };
  if (r.boundPolicy !== undefined) out.boundPolicy = r.boundPolicy.slice();
  return out;
}

class MemoryStoreImpl implements MemoryStore {
  readonly description = "memory (nothing is persisted)";
  private log: StoredRecord[] = [];
  /** Accepted envelopes per session; index i holds seq i + 1. */
  private sessions = new Map<string, StoredRecord[]>();
  private policies = new Map<string, PolicyRecord>();
  private fault: Error | null = null;
  private readonly writer: GroupCommitWriter;

  constructor(logger: StoreLogger) {
    const backend: CommitBackend = {
      commit: (ops) => this.commit(ops),
      close: () => {},
    };
    this.writer = new GroupCommitWriter({
      backend,
      description: this.description,
      logger,
      lastSeqs: [],
    });
  }

  /** Stage everything first, then publish it in one step: all or nothing. */
  private commit(ops: readonly StoreOp[]): void {
    let position = this.log.length === 0 ? 0 : (this.log[this.log.length - 1] as StoredRecord).position;
    const added: StoredRecord[] = [];
    const policies = new Map(this.policies);
    for (const op of ops) {
      if (op.type === "append") {
        for (const r of op.records) added.push({ ...(r as LogRecord), position: ++position });
      } else if (op.type === "putPolicy") {
        policies.set(op.policy.policyId, op.policy);
      } else {
        policies.delete(op.policyId);
      }
    }
    const fault = this.fault;
    if (fault !== null) {
      this.fault = null;
      throw fault;
    }
    // Nothing below can throw.
    for (const r of added) {
      this.log.push(r);
      if (r.kind === "envelope") {
        let list = this.sessions.get(r.sessionId);
        if (!list) this.sessions.set(r.sessionId, (list = []));
        list.push(r);
      }
    }
    this.policies = policies;
  }

  append(records: LogRecord[]): Promise<void> {
    return this.writer.append(records);
  }

  putPolicy(policy: PolicyRecord): Promise<void> {
    return this.writer.putPolicy(policy);
  }

  deletePolicy(policyId: string): Promise<void> {
    return this.writer.deletePolicy(policyId);
  }

  close(): Promise<void> {
    return this.writer.close();
  }

  loadAll(): StoredRecord[] {
    this.ensureOpen();
    const verifier = new LogVerifier();
    return this.log.map((r) => {
      verifier.check(r);
      return copyRecord(r);
    });
  }

  readSession(sessionId: string, afterSeq: number): StoredRecord[] {
    this.ensureOpen();
    checkAfterSeq(afterSeq);
    const list = this.sessions.get(sessionId) ?? [];
    // list[i] has seq i + 1, so "seq > afterSeq" starts at index floor(afterSeq).
    const out = list.slice(Math.max(0, Math.floor(afterSeq))).map(copyRecord);
    verifySessionRun(out, sessionId, afterSeq);
    return out;
  }

  loadPolicies(): PolicyRecord[] {
    this.ensureOpen();
    return [...this.policies.values()]
      .map((p) => ({ policyId: p.policyId, descriptor: p.descriptor.slice() }))
      .sort((a, b) => compareUtf8(a.policyId, b.policyId));
  }

  stats(): StoreStats {
    return this.writer.stats();
  }

  __failNextCommitForTests(error?: Error): void {
    this.fault = error ?? new Error("injected commit failure (test)");
  }

  private ensureOpen(): void {
    if (this.writer.isClosed) throw new Error(`runtime store is closed (${this.description})`);
  }
}

export function openMemoryStore(options: { logger?: StoreLogger } = {}): MemoryStore {
  return new MemoryStoreImpl(options.logger ?? noopLogger);
}
