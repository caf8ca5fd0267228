// The bridge: mirrors one v0.1 handoff directory into MACP Task-mode sessions
// on a runtime, and MACP results back into the files (mapping.ts has the
// mapping and the decisions; this file does the I/O).
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
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { MacpAckError, MacpClient, TaskProjection, TaskSession, type AuthConfig } from "@/lib/agent";
import { MAX_TTL_MS } from "@/lib/macp/constants";
import { HandoffDirectory, type HandoffDirectoryOptions } from "../directory";
import { HandoffError } from "../errors";
import type { HandoffHistoryStore } from "../history";
import type { HandoffRecord } from "../record";
import { isHandoffFileName } from "../snapshot";
import type { ActionKind } from "../state-machine";
import { HandoffWatcher, type WatcherOptions } from "../watch";
import {
  bridgeCommitmentId,
  bridgeMessageId,
  bridgeSessionId,
  participantsFor,
  planFor,
  type BridgeStep,
  type SessionPhase,
  type SessionView,
} from "./mapping";
import type { BridgeTask, SqliteBridgeState } from "./state";

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

interface Mirror {
  taskId: string;
  projection: TaskProjection;
  ac: AbortController;
}

const MAX_CLIENTS = 64;
const CONCURRENCY = 4;
/** After this many epochs for the same file content the bridge stops and says why. */
const MAX_EPOCHS_PER_CONTENT = 3;

const STATE_NAMES: Partial<Record<SessionState, SessionPhase>> = {
  [SessionState.OPEN]: "OPEN",
  [SessionState.SUSPENDED]: "SUSPENDED",
  [SessionState.RESOLVED]: "RESOLVED",
  [SessionState.EXPIRED]: "EXPIRED",
  [SessionState.CANCELLED]: "CANCELLED",
};

class Blocked extends Error {}

export class HandoffBridge {
  readonly dir: HandoffDirectory;
  private readonly watcher: HandoffWatcher;
  private readonly pool: readonly string[];
  private readonly ttlMs: number;
  private readonly maxOpen: number;
  private secret: Buffer = Buffer.alloc(0);
  private readonly clients = new Map<string, MacpClient>();
  private readonly mirrors = new Map<string, Mirror>();
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
    this.maxOpen = o.maxOpenSessions ?? 1_000;
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
    for (const m of this.mirrors.values()) m.ac.abort();
    this.mirrors.clear();
    this.queue.clear();
    await this.settled();
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
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

  private client(identity: string): MacpClient {
    const existing = this.clients.get(identity);
    if (existing) {
      this.clients.delete(identity);
      this.clients.set(identity, existing);
      return existing;
    }
    const auth = this.o.credentials(identity);
    if (!auth) throw new Blocked(`no credential to act as ${identity}`);
    const c = new MacpClient({
      address: this.o.runtime,
      auth,
      ...(this.o.tls ? { tls: true } : {}),
      ...(this.o.caPath ? { caPath: this.o.caPath } : {}),
      clientName: "baton-files-bridge",
    });
    this.clients.set(identity, c);
    if (this.clients.size > MAX_CLIENTS) {
      const [oldest, oc] = this.clients.entries().next().value as [string, MacpClient];
      this.clients.delete(oldest);
      oc.close();
    }
    return c;
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

    const view = await this.view(task);
    const plan = planFor(rec, view, this.pool, task.sessionId);
    switch (plan.kind) {
      case "idle":
        this.notes.delete(taskId);
        this.epochsForContent.delete(taskId);
        if (plan.done) {
          this.o.state.put({ ...task, phase: "done", fileHash: snap.hash, updatedMs: Date.now() });
          this.dropMirror(task.sessionId);
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
        this.dropMirror(task.sessionId);
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
          await this.client(view.initiator ?? task.fromAgent).cancelSession(task.sessionId, `superseded: ${plan.reason}`);
        }
        this.dropMirror(task.sessionId);
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
              this.dropMirror(task.sessionId);
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
    if (this.mirrors.size >= this.maxOpen) throw new Blocked("at capacity");
    const t = this.newTask(rec, epoch, hash);
    this.emit({ kind: "epoch", taskId: rec.task_id, sessionId: t.sessionId, epoch, reason });
    return t;
  }

  private dropMirror(sessionId: string): void {
    const m = this.mirrors.get(sessionId);
    if (!m) return;
    m.ac.abort();
    this.mirrors.delete(sessionId);
  }

  /** The current session as the runtime has it (followed live while it is open). */
  private async view(task: BridgeTask): Promise<SessionView> {
    const client = this.client(task.fromAgent);
    let meta;
    try {
      meta = await client.getSession(task.sessionId);
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.NotFound) {
        this.dropMirror(task.sessionId);
        return { exists: false, participants: [] };
      }
      throw e;
    }
    const state = STATE_NAMES[meta.state];
    let mirror = this.mirrors.get(task.sessionId);
    let projection = mirror?.projection;
    if (!projection) {
      const events = await client.history(task.sessionId);
      projection = TaskProjection.from(events);
      if (state === "OPEN") {
        if (this.mirrors.size >= this.maxOpen) throw new Blocked("at capacity");
        mirror = { taskId: task.taskId, projection, ac: new AbortController() };
        this.mirrors.set(task.sessionId, mirror);
        this.follow(client, task.sessionId, mirror, events.length);
      }
    } else if (state !== "OPEN") this.dropMirror(task.sessionId);
    const t = projection.task;
    const report = projection.terminalReport();
    const view: SessionView = { exists: true, participants: meta.participants, initiator: meta.initiator };
    if (state) view.state = state;
    if (t) {
      view.task = {
        requestedAssignee: t.requestedAssignee,
        rejections: t.rejections.map((r) => ({ assignee: r.assignee, reason: r.reason })),
        ...(t.activeAssignee ? { activeAssignee: t.activeAssignee } : {}),
        ...(report
          ? {
              terminal:
                report.kind === "complete"
                  ? {
                      kind: "complete" as const,
                      assignee: report.assignee,
                      atMs: report.timestampMs,
                      summary: report.summary,
                      output: report.output,
                    }
                  : {
                      kind: "fail" as const,
                      assignee: report.assignee,
                      atMs: report.timestampMs,
                      errorCode: report.errorCode,
                      reason: report.reason,
                    },
            }
          : {}),
      };
    }
    const action = projection.commitment?.action;
    if (action) view.commitmentAction = action;
    return view;
  }

  private follow(client: MacpClient, sessionId: string, mirror: Mirror, after: number): void {
    void (async () => {
      try {
        for await (const ev of client.subscribe(sessionId, after, { signal: mirror.ac.signal })) {
          if (mirror.projection.apply(ev)) this.enqueue(mirror.taskId);
        }
      } catch (e) {
        if (!mirror.ac.signal.aborted && !this.stopped)
          this.emit({
            kind: "error",
            taskId: mirror.taskId,
            message: `session stream ended: ${e instanceof Error ? e.message : String(e)}`,
          });
      } finally {
        if (this.mirrors.get(sessionId) === mirror) this.mirrors.delete(sessionId);
        if (!mirror.ac.signal.aborted && !this.stopped) this.enqueue(mirror.taskId);
      }
    })();
  }

  private async send(task: BridgeTask, rec: HandoffRecord, step: BridgeStep, mirror: Mirror | undefined): Promise<void> {
    const sid = task.sessionId;
    const messageId = bridgeMessageId(step.kind);
    const session = (identity: string) => new TaskSession(this.client(identity), { sessionId: sid });
    const title = titleOf(rec);
    const contextBytes = Object.keys(rec.context).length ? rec.context : undefined;
    let s: TaskSession | undefined;
    let duplicate = false;
    switch (step.kind) {
      case "start":
        s = session(rec.from_agent);
        duplicate = (
          await s.start({ intent: title, participants: [...step.participants], ttlMs: this.ttlMs, contextId: rec.task_id, messageId })
        ).duplicate;
        break;
      case "request":
        s = session(rec.from_agent);
        duplicate = (
          await s.request({
            taskId: rec.task_id,
            title,
            instructions: rec.description,
            requestedAssignee: step.requestedAssignee,
            ...(contextBytes ? { input: contextBytes } : {}),
            messageId,
          })
        ).duplicate;
        break;
      case "accept":
        s = session(step.as);
        duplicate = (await s.acceptTask({ taskId: rec.task_id, reason: "accepted in the v0.1 file", messageId })).duplicate;
        break;
      case "reject":
        s = session(step.as);
        duplicate = (await s.reject({ taskId: rec.task_id, reason: textOf(rec.context.reason) ?? "rejected in the v0.1 file", messageId }))
          .duplicate;
        break;
      case "complete":
        s = session(step.as);
        duplicate = (
          await s.complete({
            taskId: rec.task_id,
            summary: textOf(rec.context.macp_summary) ?? `completed in the v0.1 file by ${step.as}`,
            ...(contextBytes ? { output: contextBytes } : {}),
            messageId,
          })
        ).duplicate;
        break;
      case "fail":
        s = session(step.as);
        duplicate = (
          await s.fail({
            taskId: rec.task_id,
            errorCode: textOf(rec.context.macp_error_code) ?? "V01_FAILED",
            reason: textOf(rec.context.macp_reason) ?? textOf(rec.context.reason) ?? `failed in the v0.1 file at ${step.as}`,
            retryable: true, // v0.1 lets the offerer re-offer it
            messageId,
          })
        ).duplicate;
        break;
      case "commit":
        s = session(rec.from_agent);
        duplicate = (
          await s.commit({
            action: step.action,
            reason:
              step.action === "task.completed"
                ? `v0.1 handoff ${rec.task_id} completed by ${rec.to_agent}`
                : `v0.1 handoff ${rec.task_id} failed at ${rec.to_agent}`,
            authorityScope: "task",
            commitmentId: bridgeCommitmentId(this.secret, sid),
            messageId,
          })
        ).duplicate;
        break;
      case "cancel":
        await this.client(rec.from_agent).cancelSession(sid, step.reason);
        break;
    }
    const env: Envelope | undefined = s?.lastEnvelope;
    if (env && mirror) mirror.projection.apply(env);
    this.emit({ kind: "sent", taskId: rec.task_id, sessionId: sid, step: step.kind, duplicate });
    await this.o.hooks?.afterSend?.(rec.task_id, step.kind);
  }
}

function textOf(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

/** A one-line title from the description (first line, at most 120 characters). */
function titleOf(rec: HandoffRecord): string {
  const line = rec.description.split(/\r?\n/, 1)[0]?.trim() ?? "";
  if (line === "") return `v0.1 handoff ${rec.task_id}`;
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
