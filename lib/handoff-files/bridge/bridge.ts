// The bridge: mirrors one v0.1 handoff directory into MACP Task-mode sessions
// on a runtime, and MACP results back into the files (mapping.ts has the
// mapping and the decisions; this file queues and reconciles handoffs, with
// steps.ts sending a step, session-view.ts reading a session, mirrors.ts
// following open ones and clients.ts holding a client per identity).
//
// Work is per handoff and serialised: a change to the file (from the
// watcher) or to its session (from a StreamSession subscription) queues the
// handoff; reconciling it reads the file and the session, asks planFor()
// what to do, does one thing (send envelopes, write the file, or open a new
// epoch), then queues the handoff again until it is idle.
//
// Idempotent across restarts: the epoch and session of every handoff are
// kept in SQLite before anything is sent; session ids come from an HMAC of
// the task_id and epoch under a secret kept there too; every envelope's
// message_id is fixed per step ("handoff-files:accept"), so a resend after a
// crash is acknowledged as a duplicate and never creates anything twice.

import { Code, ConnectError } from "@connectrpc/connect";
import { MacpAckError, type AuthConfig } from "@/lib/agent";
import { MAX_TTL_MS } from "@/lib/macp/constants";
import { HandoffDirectory, type HandoffDirectoryOptions } from "../directory";
import { HandoffError } from "../errors";
import type { HandoffHistoryStore } from "../history";
import type { HandoffRecord } from "../record";
import { isHandoffFileName } from "../snapshot";
import type { ActionKind } from "../state-machine";
import { HandoffWatcher, type WatcherOptions } from "../watch";
import { Blocked, ClientPool } from "./clients";
import { bridgeCommitmentId, bridgeSessionId, participantsFor, planFor, type BridgeStep } from "./mapping";
import { SessionMirrors, type Mirror } from "./mirrors";
import { readSessionView } from "./session-view";
import type { BridgeTask, SqliteBridgeState } from "./state";
import { sendStep } from "./steps";

export interface BridgeOptions {
  /** The v0.1 directory to mirror. */
  dir: string;
  /** MACP runtime address (host:port or URL). */
  runtime: string;
  tls?: boolean;
  caPath?: string;
  /** The credential to act as `identity` (dev-mode identity or its token); undefined when there is none. */
  credentials: (identity: string) => AuthConfig | undefined;
  /** MACP agents added to every session, who may take offers made to anyone. */
  participants?: readonly string[];
  /** Session time to live. Default 24 h (the protocol's maximum); an expired session is replaced by a new epoch. */
  ttlMs?: number;
  state: SqliteBridgeState;
  /** Record the directory's changes here too (the same store the console reads). */
  history?: HandoffHistoryStore;
  directory?: HandoffDirectoryOptions;
  watch?: Pick<WatcherOptions, "mode" | "pollMs" | "maxFiles" | "maxBytes">;
  /** Sessions followed at once (one StreamSession each). Default 1,000; more wait. */
  maxOpenSessions?: number;
  /** How often every open handoff is looked at again (catches expiry). Default 60 s. */
  sweepMs?: number;
  onEvent?: (event: BridgeEvent) => void;
  /** Test seam: called after each envelope is acknowledged (throw to play a crash). */
  hooks?: { afterSend?: (taskId: string, step: BridgeStep["kind"]) => Promise<void> };
}

export type BridgeEvent =
  | { kind: "sent"; taskId: string; sessionId: string; step: BridgeStep["kind"]; duplicate: boolean }
  | { kind: "file"; taskId: string; sessionId: string; action: ActionKind; why: string }
  | { kind: "epoch"; taskId: string; sessionId: string; epoch: number; reason: string }
  | { kind: "skipped" | "blocked" | "parked" | "done"; taskId: string; reason: string }
  | { kind: "error"; taskId?: string; message: string };

const CONCURRENCY = 4;
/** After this many epochs for the same file content the bridge stops and says why. */
const MAX_EPOCHS_PER_CONTENT = 3;

export class HandoffBridge {
  readonly dir: HandoffDirectory;
  private readonly watcher: HandoffWatcher;
  private readonly pool: readonly string[];
  private readonly ttlMs: number;
  private secret: Buffer = Buffer.alloc(0);
  private readonly clients: ClientPool;
  private readonly mirrors: SessionMirrors;
  private readonly queue = new Set<string>();
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private readonly epochsForContent = new Map<string, { hash: string; count: number }>();
  private readonly notes = new Map<string, string>();
  private readonly idleWaiters: (() => void)[] = [];
  private sweepTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly o: BridgeOptions) {
    this.dir = new HandoffDirectory(o.dir, { ...o.directory, ...(o.history ? { history: o.history } : {}) });
    this.pool = [...new Set((o.participants ?? []).map((p) => p.trim()).filter((p) => p !== ""))];
    this.ttlMs = o.ttlMs ?? MAX_TTL_MS;
    this.clients = new ClientPool(o);
    this.mirrors = new SessionMirrors({
      max: o.maxOpenSessions ?? 1_000,
      changed: (taskId) => this.enqueue(taskId),
      failed: (taskId, message) => {
        if (!this.stopped) this.emit({ kind: "error", taskId, message });
      },
    });
    this.watcher = new HandoffWatcher({
      dirs: [this.dir.dir],
      ...o.watch,
      ...(o.history ? { history: o.history } : {}),
      onError: (e) => this.emit({ kind: "error", message: e instanceof Error ? e.message : String(e) }),
    });
  }

  /** Read every file once and start following the directory and the sessions. */
  async start(): Promise<void> {
    this.secret = this.o.state.secret();
    this.watcher.subscribe((c) => {
      if (c.snapshot?.valid) this.enqueue(c.snapshot.record.task_id);
      else this.enqueue(c.taskId);
    });
    await this.watcher.start();
    for (const id of this.o.state.openTaskIds(this.dir.dir)) this.enqueue(id);
    const sweepMs = this.o.sweepMs ?? 60_000;
    this.sweepTimer = setInterval(() => {
      for (const id of this.o.state.openTaskIds(this.dir.dir)) this.enqueue(id);
    }, sweepMs);
    this.sweepTimer.unref?.();
  }

  /** Stop following; in-flight work finishes first. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    for (const t of this.retryTimers.values()) clearTimeout(t);
    this.retryTimers.clear();
    this.watcher.stop();
    this.mirrors.dropAll();
    this.queue.clear();
    await this.settled();
    this.clients.closeAll();
  }

  /** Resolves when nothing is queued or running (retries waiting on a timer do not count). */
  settled(): Promise<void> {
    if (this.queue.size === 0 && this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Queue a handoff for reconciling. */
  enqueue(taskId: string): void {
    if (this.stopped || !isHandoffFileName(`${taskId}.json`)) return;
    if (this.running.has(taskId)) {
      this.again.add(taskId);
      return;
    }
    this.queue.add(taskId);
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.running.size < CONCURRENCY) {
      const next = [...this.queue].find((id) => !this.running.has(id));
      if (next === undefined) break;
      this.queue.delete(next);
      this.running.add(next);
      void this.reconcile(next)
        .then(
          () => this.failures.delete(next),
          (e: unknown) => this.onFailure(next, e),
        )
        .finally(() => {
          this.running.delete(next);
          if (this.again.delete(next)) this.queue.add(next);
          this.pump();
          if (this.queue.size === 0 && this.running.size === 0) for (const w of this.idleWaiters.splice(0)) w();
        });
    }
  }

  private onFailure(taskId: string, e: unknown): void {
    if (this.stopped) return;
    if (e instanceof Blocked) {
      this.note("blocked", taskId, e.message);
      this.retryLater(taskId, this.o.sweepMs ?? 60_000);
      return;
    }
    const n = (this.failures.get(taskId) ?? 0) + 1;
    this.failures.set(taskId, n);
    const message =
      e instanceof MacpAckError
        ? `${e.code}: ${e.runtimeMessage}`
        : e instanceof ConnectError
          ? `runtime call failed (${Code[e.code]}): ${e.rawMessage}`
          : e instanceof Error
            ? e.message
            : String(e);
    this.emit({ kind: "error", taskId, message });
    this.retryLater(taskId, Math.min(60_000, 500 * 2 ** Math.min(n - 1, 7)));
  }

  private retryLater(taskId: string, delayMs: number): void {
    clearTimeout(this.retryTimers.get(taskId));
    const t = setTimeout(() => {
      this.retryTimers.delete(taskId);
      this.enqueue(taskId);
    }, delayMs);
    t.unref?.();
    this.retryTimers.set(taskId, t);
  }

  private emit(e: BridgeEvent): void {
    try {
      this.o.onEvent?.(e);
    } catch {
      // A listener's failure is not the bridge's.
    }
  }

  /**
   * Report why a handoff waits, once until the reason changes. (Done and
   * skipped handoffs are not looked at again until their file changes, so
   * those are simply reported.)
   */
  private note(kind: "skipped" | "blocked" | "parked" | "done", taskId: string, reason: string): void {
    if (kind === "done" || kind === "skipped") {
      this.forget(taskId);
      this.emit({ kind, taskId, reason });
      return;
    }
    const key = `${kind}:${reason}`;
    if (this.notes.get(taskId) === key) return;
    this.notes.set(taskId, key);
    this.emit({ kind, taskId, reason });
  }

  /** Drop what is kept in memory about a handoff (bounded by the handoffs in flight). */
  private forget(taskId: string): void {
    this.notes.delete(taskId);
    this.epochsForContent.delete(taskId);
  }

  private newTask(rec: HandoffRecord, epoch: number, hash: string): BridgeTask {
    const t: BridgeTask = {
      dir: this.dir.dir,
      taskId: rec.task_id,
      epoch,
      sessionId: bridgeSessionId(this.secret, this.dir.dir, rec.task_id, epoch),
      fromAgent: rec.from_agent,
      participants: participantsFor(rec, this.pool),
      phase: "open",
      fileHash: hash,
      updatedMs: Date.now(),
    };
    this.o.state.put(t); // durable before anything is sent for this epoch
    return t;
  }

  private async reconcile(taskId: string): Promise<void> {
    const snap = await this.dir.read(`${taskId}.json`);
    if (!snap) {
      this.forget(taskId); // removed: the session is left as it is
      return;
    }
    if (!snap.valid) {
      this.note("blocked", taskId, `not mirrored: ${snap.reason}`);
      return;
    }
    const recorded = this.dir.recordedProblem(snap);
    if (recorded !== undefined) {
      this.note("blocked", taskId, `not mirrored: ${recorded}`);
      return;
    }
    const rec = snap.record;
    let task = this.o.state.get(this.dir.dir, taskId);
    if (!task || task.phase === "skipped") {
      if (!task && rec.status !== "offered" && rec.status !== "accepted") {
        this.o.state.put({
          dir: this.dir.dir,
          taskId,
          epoch: 0,
          sessionId: "",
          fromAgent: rec.from_agent,
          participants: [],
          phase: "skipped",
          note: `already ${rec.status} when the bridge first saw it`,
          fileHash: snap.hash,
          updatedMs: Date.now(),
        });
        this.note("skipped", taskId, `already ${rec.status} when the bridge first saw it; not mirrored`);
        return;
      }
      if (task && rec.status !== "offered") return;
      task = this.openEpoch(rec, (task?.epoch ?? 0) + 1, snap.hash, rec.status === "offered" ? "offered" : `first seen ${rec.status}`);
    }
    if ((task.phase === "done" || task.phase === "parked") && task.fileHash === snap.hash) return;
    if (task.phase === "parked") task = this.openEpoch(rec, task.epoch + 1, snap.hash, "the file changed after its session was cancelled");

    const view = await readSessionView(this.clients.get(task.fromAgent), task, this.mirrors);
    const plan = planFor(rec, view, this.pool, task.sessionId);
    switch (plan.kind) {
      case "idle":
        this.notes.delete(taskId);
        this.epochsForContent.delete(taskId);
        if (plan.done) {
          this.o.state.put({ ...task, phase: "done", fileHash: snap.hash, updatedMs: Date.now() });
          this.mirrors.drop(task.sessionId);
          this.note("done", taskId, `${rec.status}; mirrored in session ${task.sessionId}`);
        } else if (task.phase !== "open" || task.fileHash !== snap.hash) {
          this.o.state.put({ ...task, phase: "open", fileHash: snap.hash, updatedMs: Date.now() });
        }
        return;
      case "blocked":
        this.note("blocked", taskId, plan.reason);
        return;
      case "parked":
        this.o.state.put({ ...task, phase: "parked", fileHash: snap.hash, note: plan.reason, updatedMs: Date.now() });
        this.mirrors.drop(task.sessionId);
        this.note("parked", taskId, plan.reason);
        return;
      case "file": {
        try {
          await this.dir.act(snap, plan.action);
        } catch (e) {
          if (!(e instanceof HandoffError)) throw e;
          if (e.kind !== "conflict" && e.kind !== "foreign-writer" && e.kind !== "lock-lost") {
            this.note("blocked", taskId, `cannot write the MACP result into the file: ${e.message}`);
            return;
          }
        }
        this.emit({ kind: "file", taskId, sessionId: task.sessionId, action: plan.action.kind, why: plan.why });
        this.enqueue(taskId);
        return;
      }
      case "new-epoch": {
        const seen = this.epochsForContent.get(taskId);
        const count = seen?.hash === snap.hash ? seen.count + 1 : 1;
        if (count > MAX_EPOCHS_PER_CONTENT) {
          this.note("blocked", taskId, `gave up after ${MAX_EPOCHS_PER_CONTENT} sessions for the same file content: ${plan.reason}`);
          return;
        }
        this.epochsForContent.set(taskId, { hash: snap.hash, count });
        if (plan.cancelCurrent && view.state === "OPEN") {
          await this.clients.get(view.initiator ?? task.fromAgent).cancelSession(task.sessionId, `superseded: ${plan.reason}`);
        }
        this.mirrors.drop(task.sessionId);
        this.openEpoch(rec, task.epoch + 1, snap.hash, plan.reason);
        this.enqueue(taskId);
        return;
      }
      case "send": {
        const mirror = this.mirrors.get(task.sessionId);
        for (const step of plan.steps) {
          try {
            await this.send(task, rec, step, mirror);
          } catch (e) {
            if (e instanceof MacpAckError && ["INVALID_ENVELOPE", "FORBIDDEN", "POLICY_DENIED", "SESSION_NOT_OPEN"].includes(e.code)) {
              // The session moved under us (e.g. an MACP agent answered first): look again.
              this.mirrors.drop(task.sessionId);
              const n = (this.failures.get(taskId) ?? 0) + 1;
              if (n <= 3) {
                this.failures.set(taskId, n);
                this.enqueue(taskId);
                return;
              }
            }
            throw e;
          }
        }
        this.enqueue(taskId);
        return;
      }
    }
  }

  private openEpoch(rec: HandoffRecord, epoch: number, hash: string, reason: string): BridgeTask {
    if (this.mirrors.atCapacity()) throw new Blocked("at capacity");
    const t = this.newTask(rec, epoch, hash);
    this.emit({ kind: "epoch", taskId: rec.task_id, sessionId: t.sessionId, epoch, reason });
    return t;
  }

  private async send(task: BridgeTask, rec: HandoffRecord, step: BridgeStep, mirror: Mirror | undefined): Promise<void> {
    const sent = await sendStep(rec, step, {
      sessionId: task.sessionId,
      ttlMs: this.ttlMs,
      commitmentId: bridgeCommitmentId(this.secret, task.sessionId),
      client: (identity) => this.clients.get(identity),
    });
    if (sent.envelope && mirror) mirror.projection.apply(sent.envelope);
    this.emit({ kind: "sent", taskId: rec.task_id, sessionId: task.sessionId, step: step.kind, duplicate: sent.duplicate });
    await this.o.hooks?.afterSend?.(rec.task_id, step.kind);
  }
}
