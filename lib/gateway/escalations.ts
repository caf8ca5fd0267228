// Escalation of an unanswered "Hand off…" offer (issue #12, item 8): "if
// nobody answers in N minutes, tell the approvers, then re-offer to the next
// person". The console keeps each chain in its data folder
// (escalations.sqlite next to the catalog) and runs it on the owner's behalf,
// with the owner's own runtime identity, through the same ActionGateway the
// owner's clicks go through (decide() first, every time).
//
// Protocol: MACP handoff mode takes no new offer while one is pending and
// has no way to withdraw an offer (PROTOCOL.md §4.4: "only one offer is
// outstanding at a time"; only the target answers it). So a REOFFER step
// cancels the unanswered session (CancelSession, which the owner may do,
// §3.7) and hands off again in a new session: the same intent, scope,
// reason, policy, time to live and runbook, to the next person. The chain
// then watches the new session's offer.
//
// Exactly once: each step's ids are derived from the chain and the step
// index (stepIds), so a step re-run after a crash sends the same envelopes,
// which the runtime answers as duplicates, and the same webhook delivery
// ids, which the outbox ignores. A REOFFER is marked in flight before its
// first send: a restart finishes it rather than reading the session it
// cancelled itself as "answered". The scheduler arms one timer for the
// earliest due chain; at start it fires the overdue ones once.
//
// Stopping: a chain stops when its offer is no longer pending (accepted,
// declined, committed, cancelled, expired). The catalog's writes are watched
// (the session's row), and each step re-reads the session before it acts.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { Code, ConnectError } from "@connectrpc/connect";
import { checkEscalationChain, type EscalationStepInput } from "@/lib/actions/rules";
import type { UserRecord } from "@/lib/accounts/users-file";
import { commitmentAuthority, designatedRoles, implicitAcceptTimeoutMs, type PolicySummary } from "@/lib/authz/policy-summary";
import { HANDOFF_MODE, MAX_TTL_MS, SCOPE_EXTENSION } from "@/lib/macp/constants";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionView } from "@/lib/macp/projections/session";
import type { PolicyRequest, StartInput } from "./action-input";
import { invalidField } from "./action-input";
import type { ActionGateway } from "./actions";
import { pendingOffer } from "./actions/results";
import type { SignedInUser } from "./identity";
import { silentLogger, type GatewayLogger } from "./logger";
import { lifecycleOf, type LoadedSession } from "./session-state";
import { sessionIdForStart } from "./actions/start";

export type EscalationStateName = "pending" | "done" | "stopped" | "cancelled" | "failed";

/** One step the console ran for the owner. */
export interface EscalationActionRecord {
  step: number;
  kind: EscalationStepInput["kind"];
  sessionId: string;
  messageIds: string[];
  cancelledSessionId: string;
  participants: string[];
  atMs: number;
}

export interface EscalationRecord {
  origin: string;
  /** The session whose offer is watched now. */
  sessionId: string;
  /** That offer's handoff_id. */
  handoffId: string;
  /** Its target (who must answer now). */
  target: string;
  /** The owner's participant id and account. */
  owner: string;
  ownerUser: string;
  state: EscalationStateName;
  steps: EscalationStepInput[];
  nextStep: number;
  /** When the next step runs (0: none). */
  nextAtMs: number;
  /** A REOFFER started and not yet recorded as done (finish it, never re-check the session it cancelled). */
  inflight: boolean;
  done: EscalationActionRecord[];
  detail: string;
  sessionIds: string[];
  createdMs: number;
  updatedMs: number;
}

/** The ids one step sends with, derived from the chain and the step (UUID v4 layout). */
export function stepIds(origin: string, step: number): { start: string; offer: string; cancel: string; context: (i: number) => string; delivery: string } {
  const id = (part: string) => {
    const h = createHash("sha256").update("baton escalation\u0000").update(origin).update("\u0000").update(String(step)).update("\u0000").update(part).digest();
    h[6] = ((h[6] as number) & 0x0f) | 0x40;
    h[8] = ((h[8] as number) & 0x3f) | 0x80;
    const hex = h.subarray(0, 16).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  };
  return { start: id("start"), offer: id("offer"), cancel: id("cancel"), context: (i) => id(`context:${i}`), delivery: id("notify") };
}

/** The policy choice that re-creates a session's bound policy in a new session. */
export function policyRequestOf(policy: PolicySummary | undefined): PolicyRequest {
  if (!policy) return { kind: "default" };
  if (commitmentAuthority(policy) === "designated_role" && designatedRoles(policy).length > 0) return { kind: "approval", approvers: [...designatedRoles(policy)] };
  const t = implicitAcceptTimeoutMs(policy);
  if (t > 0) return { kind: "implicit", timeoutMs: t };
  return { kind: "default" };
}

/** Why a chain stops, when the offer it watches is no longer waiting; undefined while it waits. */
export function stopReason(view: SessionView, lifecycle: string, handoffId: string, nameOf: (id: string) => string): string | undefined {
  const offer = view.handoff?.offers.find((o) => o.handoffId === handoffId);
  if (offer?.status === "accepted") return `${nameOf(offer.acceptedBy ?? offer.target)} accepted the offer.`;
  if (offer?.status === "declined") return `${nameOf(offer.declinedBy ?? offer.target)} declined the offer.`;
  if (view.commitment || lifecycle === "Resolved") return "The session was committed.";
  if (lifecycle === "Cancelled") return "The session was cancelled.";
  if (lifecycle === "Expired") return "The session expired.";
  if (!offer) return "The offer it watched is not in the session.";
  const pending = pendingOffer(view);
  if (pending?.handoffId !== handoffId) return "Another offer was made in the session.";
  if (lifecycle !== "Open") return `The session is ${lifecycle.toLowerCase()}.`;
  return undefined;
}

// ------------------------------------------------------------------ store

const SCHEMA = `
CREATE TABLE IF NOT EXISTS escalations (
  origin TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  next_at INTEGER NOT NULL,
  body TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS escalations_due ON escalations (next_at) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS escalation_sessions (
  session_id TEXT PRIMARY KEY,
  origin TEXT NOT NULL
) STRICT;
`;

/** Finished chains kept (for the session pages that show them); older ones are pruned. */
const KEEP_FINISHED = 10_000;

export class EscalationStore {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(file: string) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    if (file !== ":memory:") this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(SCHEMA);
    this.stmts = {
      get: this.db.prepare<[string], { body: string }>("SELECT body FROM escalations WHERE origin = ?"),
      originOf: this.db.prepare<[string], { origin: string }>("SELECT origin FROM escalation_sessions WHERE session_id = ?"),
      put: this.db.prepare<[string, string, number, string, number]>(
        "INSERT INTO escalations (origin, state, next_at, body, updated_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT(origin) DO UPDATE SET state = excluded.state, next_at = excluded.next_at, body = excluded.body, updated_ms = excluded.updated_ms",
      ),
      link: this.db.prepare<[string, string]>("INSERT OR IGNORE INTO escalation_sessions (session_id, origin) VALUES (?, ?)"),
      due: this.db.prepare<[number, number], { body: string }>("SELECT body FROM escalations WHERE state = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?"),
      next: this.db.prepare<[], { next_at: number }>("SELECT next_at FROM escalations WHERE state = 'pending' ORDER BY next_at LIMIT 1"),
      pending: this.db.prepare<[number], { body: string }>("SELECT body FROM escalations WHERE state = 'pending' ORDER BY next_at LIMIT ?"),
      finishedCount: this.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM escalations WHERE state <> 'pending'"),
      pruneLinks: this.db.prepare<[number]>(
        "DELETE FROM escalation_sessions WHERE origin IN (SELECT origin FROM escalations WHERE state <> 'pending' ORDER BY updated_ms LIMIT ?)",
      ),
      prune: this.db.prepare<[number]>("DELETE FROM escalations WHERE origin IN (SELECT origin FROM escalations WHERE state <> 'pending' ORDER BY updated_ms LIMIT ?)"),
    };
  }

  get(origin: string): EscalationRecord | undefined {
    const r = this.stmts.get.get(origin);
    return r ? (JSON.parse(r.body) as EscalationRecord) : undefined;
  }

  /** The chain a session belongs to (its origin or any session a re-offer made). */
  bySession(sessionId: string): EscalationRecord | undefined {
    const o = this.stmts.originOf.get(sessionId);
    return o ? this.get(o.origin) : undefined;
  }

  /** Write a chain (and index its sessions), in one transaction. */
  put(rec: EscalationRecord): void {
    this.db.transaction(() => {
      this.stmts.put.run(rec.origin, rec.state, rec.state === "pending" ? rec.nextAtMs : 0, JSON.stringify(rec), rec.updatedMs);
      for (const s of rec.sessionIds) this.stmts.link.run(s, rec.origin);
    })();
  }

  /**
   * Read, change and write one chain in a transaction; the change is not
   * applied (undefined) when `change` returns undefined.
   */
  update(origin: string, change: (rec: EscalationRecord) => EscalationRecord | undefined): EscalationRecord | undefined {
    return this.db.transaction(() => {
      const rec = this.get(origin);
      if (!rec) return undefined;
      const next = change(rec);
      if (next) this.put(next);
      return next;
    })();
  }

  due(now: number, limit: number): EscalationRecord[] {
    return this.stmts.due.all(now, limit).map((r) => JSON.parse(r.body) as EscalationRecord);
  }

  /** Chains still running, soonest first (at most `limit`). */
  pending(limit: number): EscalationRecord[] {
    return this.stmts.pending.all(limit).map((r) => JSON.parse(r.body) as EscalationRecord);
  }

  nextDueMs(): number | undefined {
    return this.stmts.next.get()?.next_at;
  }

  /** Keep at most `keep` finished chains (oldest go first). */
  prune(keep = KEEP_FINISHED): number {
    const n = this.stmts.finishedCount.get()?.n ?? 0;
    if (n <= keep) return 0;
    return this.db.transaction(() => {
      this.stmts.pruneLinks.run(n - keep);
      return this.stmts.prune.run(n - keep).changes;
    })();
  }

  close(): void {
    this.db.close();
  }
}

// -------------------------------------------------------------- scheduler

/** What a NOTIFY step tells (the webhooks' offer.escalated event). */
export interface EscalationNotice {
  deliveryKey: string;
  sessionId: string;
  intent: string;
  scope: string;
  owner: string;
  /** Who still has not answered. */
  target: string;
  /** Who is told. */
  to: string[];
  involved: string[];
  unansweredMs: number;
  atMs: number;
}

export interface EscalationsOptions {
  store: EscalationStore;
  actions: ActionGateway;
  users: { users(): Promise<readonly UserRecord[]> };
  /** How long one "minute" of a chain is (BATON_ESCALATION_MINUTE_MS; 60 000 outside tests). */
  minuteMs: number;
  /** The webhooks' path for offer.escalated (null: no webhooks configured). */
  notify?: () => { escalated(notice: EscalationNotice): Promise<void> | void } | null;
  /** Told whenever a chain changes (the approvers' inboxes, the session pages). */
  onChange?: (rec: EscalationRecord) => void;
  logger?: GatewayLogger;
  now?: () => number;
  /** Wait before retrying a step that failed for a passing reason (runtime unreachable). Default 5 s. */
  retryMs?: number;
}

/** Chains run per scheduler pass (the rest on the next one). */
const BATCH = 50;
/** Running chains checked per catalog write. */
const WATCH_LIMIT = 5_000;

function signedIn(u: UserRecord): SignedInUser {
  return {
    username: u.username,
    displayName: u.displayName,
    role: u.role,
    participantId: u.participantId,
    ...(u.runtimeToken !== undefined ? { runtimeToken: u.runtimeToken } : {}),
  };
}

/** The offer was answered while the step ran: the chain stops with this sentence. */
class StepStopped extends Error {}

class StepFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export class Escalations {
  private readonly store: EscalationStore;
  private readonly log: GatewayLogger;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  private running = new Set<string>();
  private closed = false;
  private passing: Promise<void> | null = null;
  private again = false;
  private watchTimer: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<(sessionId: string) => void>();

  constructor(private readonly options: EscalationsOptions) {
    this.store = options.store;
    this.log = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  /** Reload what is pending and fire the overdue chains once. */
  start(): void {
    const overdue = this.store.pending(WATCH_LIMIT).filter((r) => r.nextAtMs <= this.now()).length;
    if (overdue > 0) this.log.info({ overdue }, "escalations: running the steps that fell due while the console was stopped");
    this.kick();
  }

  get minuteMs(): number {
    return this.options.minuteMs;
  }

  /**
   * Set up a chain on the caller's pending offer. Starting the same chain
   * again answers the one kept; another chain on the session is ALREADY_EXISTS.
   */
  async create(user: SignedInUser, sessionId: string, steps: readonly EscalationStepInput[], signal?: AbortSignal): Promise<EscalationRecord> {
    const existing = this.store.bySession(sessionId);
    if (existing) {
      // A retry of the same request answers the chain kept; anything else is another chain.
      const same = existing.origin === sessionId && existing.owner === user.participantId && sameSteps(existing, steps);
      if (same) return existing;
      throw new ConnectError("This session already has an escalation; cancel it first.", Code.AlreadyExists);
    }
    const { loaded, decision } = await this.options.actions.decideOn(user, sessionId, "escalate", signal);
    if (!decision.allowed) throw new ConnectError(decision.reason, Code.PermissionDenied, { "x-baton-deny": decision.code });
    if (loaded.meta.mode !== HANDOFF_MODE) throw new ConnectError("Only handoff offers can be escalated.", Code.FailedPrecondition);
    const offer = pendingOffer(loaded.view) as HandoffRecord; // decide() allowed: an offer is pending
    const chain = chainOf(steps, user.participantId, offer.target, "steps");
    const now = this.now();
    const first = chain[0] as EscalationStepInput;
    const rec: EscalationRecord = {
      origin: sessionId,
      sessionId,
      handoffId: offer.handoffId,
      target: offer.target,
      owner: user.participantId,
      ownerUser: user.username,
      state: "pending",
      steps: chain,
      nextStep: 0,
      nextAtMs: (offer.offeredAt > 0 ? offer.offeredAt : now) + first.afterMinutes * this.options.minuteMs,
      inflight: false,
      done: [],
      detail: "",
      sessionIds: [sessionId],
      createdMs: now,
      updatedMs: now,
    };
    this.store.put(rec);
    this.log.info({ sessionId, owner: user.participantId, steps: chain.length, nextAt: new Date(rec.nextAtMs).toISOString() }, "escalation set up");
    this.changed(rec);
    this.kick();
    return rec;
  }

  get(sessionId: string): EscalationRecord | undefined {
    return this.store.bySession(sessionId);
  }

  /** For the inboxes: the people a running chain told about this session's unanswered offer. */
  noticeFor(sessionId: string): { owner: string; target: string; to: readonly string[]; sinceMs: number } | undefined {
    const rec = this.store.bySession(sessionId);
    if (!rec || rec.state !== "pending" || rec.sessionId !== sessionId) return undefined;
    const told = rec.done.filter((a) => a.kind === "notify" && a.sessionId === sessionId).at(-1);
    return told ? { owner: rec.owner, target: rec.target, to: told.participants, sinceMs: told.atMs } : undefined;
  }

  /** Listen to chain changes (session ids of the chain); returns the unsubscribe. */
  onChange(listener: (sessionId: string) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Cancel a chain (decide() "cancelEscalation" is the caller's). Idempotent: a chain no longer pending is answered as it is. */
  cancel(sessionId: string, by: string): EscalationRecord | undefined {
    const rec = this.store.bySession(sessionId);
    if (!rec) return undefined;
    const out =
      this.store.update(rec.origin, (r) =>
        r.state === "pending" ? { ...r, state: "cancelled", nextAtMs: 0, detail: `Cancelled by ${by}.`, updatedMs: this.now() } : undefined,
      ) ?? this.store.get(rec.origin);
    if (out && out.state === "cancelled") {
      this.log.info({ sessionId: out.sessionId, by }, "escalation cancelled");
      this.changed(out);
    }
    return out;
  }

  /** A catalog write: check the running chains' sessions (coalesced). */
  catalogChanged(row: (sessionId: string) => { open: boolean; phase: string } | undefined): void {
    if (this.closed || this.watchTimer) return;
    this.watchTimer = setTimeout(() => {
      this.watchTimer = null;
      for (const rec of this.store.pending(WATCH_LIMIT)) {
        if (rec.inflight || this.running.has(rec.origin)) continue;
        const r = row(rec.sessionId);
        if (!r) continue;
        if (!r.open || (r.phase !== "OfferPending" && r.phase !== "ContextSharing")) {
          // The row says the offer moved on: confirm from the session itself (it names who answered).
          void this.check(rec.origin);
        }
      }
    }, 100);
    this.watchTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.watchTimer) clearTimeout(this.watchTimer);
    await this.passing;
  }

  // ---------------------------------------------------------------- internals

  private changed(rec: EscalationRecord): void {
    for (const l of this.listeners) {
      for (const id of rec.sessionIds) {
        try {
          l(id);
        } catch (err) {
          this.log.warn({ err }, "escalations: a change listener failed");
        }
      }
    }
    try {
      this.options.onChange?.(rec);
    } catch (err) {
      this.log.warn({ err }, "escalations: a change listener failed");
    }
  }

  /** Run what is due now, then arm the timer for the next. Serialized; calls during a pass coalesce. */
  private kick(): void {
    if (this.closed) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = (async () => {
      do {
        this.again = false;
        const due = this.store.due(this.now(), BATCH);
        for (const rec of due) {
          if (this.closed) return;
          await this.fire(rec.origin);
        }
        if (due.length === BATCH) this.again = true;
      } while (this.again && !this.closed);
    })()
      .catch((err: unknown) => this.log.error({ err }, "escalations: a scheduler pass failed"))
      .finally(() => {
        this.passing = null;
        this.arm();
      });
  }

  private arm(): void {
    if (this.closed) return;
    const next = this.store.nextDueMs();
    if (next === undefined) return;
    if (this.timer && this.timerAt === next) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next;
    // setTimeout holds at most ~24.8 days; chains are at most 5 days long.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, Math.max(0, Math.min(next - this.now(), 2 ** 31 - 1)));
    this.timer.unref();
  }

  private async owner(rec: EscalationRecord): Promise<{ user: SignedInUser; nameOf: (id: string) => string } | string> {
    const users = await this.options.users.users();
    const u = users.find((x) => x.username === rec.ownerUser && x.participantId === rec.owner);
    const names = new Map(users.map((x) => [x.participantId, x.displayName]));
    const nameOf = (id: string) => names.get(id) ?? id;
    if (!u) return `${rec.ownerUser}'s account no longer acts as ${rec.owner}, so Baton stopped acting for them.`;
    if (u.disabled === true) return `${u.displayName}'s account is disabled, so Baton stopped acting for them.`;
    return { user: signedIn(u), nameOf };
  }

  /** Stop a chain whose offer was answered (checked on the session itself). */
  private async check(origin: string): Promise<void> {
    if (this.running.has(origin)) return;
    this.running.add(origin);
    try {
      const rec = this.store.get(origin);
      if (!rec || rec.state !== "pending" || rec.inflight) return;
      const who = await this.owner(rec);
      if (typeof who === "string") return this.finish(origin, "failed", who);
      const { loaded } = await this.options.actions.decideOn(who.user, rec.sessionId, "escalate");
      const reason = stopReason(loaded.view, lifecycleName(loaded), rec.handoffId, who.nameOf);
      if (reason !== undefined) this.finish(origin, "stopped", reason);
    } catch (err) {
      this.log.warn({ err, origin }, "escalations: could not check a session (the step re-checks before it acts)");
    } finally {
      this.running.delete(origin);
    }
  }

  private finish(origin: string, state: EscalationStateName, detail: string): void {
    const out = this.store.update(origin, (r) => (r.state === "pending" ? { ...r, state, nextAtMs: 0, inflight: false, detail, updatedMs: this.now() } : undefined));
    if (out) {
      this.log.info({ sessionId: out.sessionId, state, detail }, `escalation ${state}`);
      this.changed(out);
      this.store.prune();
    }
  }

  /** Run a chain's next step if it is still due and its offer still waits. */
  private async fire(origin: string): Promise<void> {
    if (this.running.has(origin)) return;
    this.running.add(origin);
    try {
      const rec = this.store.get(origin);
      if (!rec || rec.state !== "pending" || rec.nextAtMs > this.now()) return;
      const who = await this.owner(rec);
      if (typeof who === "string") return this.finish(origin, "failed", who);
      const step = rec.steps[rec.nextStep];
      if (!step) return this.finish(origin, "done", "Every step ran.");
      const { loaded, decision, policy } = await this.options.actions.decideOn(who.user, rec.sessionId, "escalate");
      if (!rec.inflight) {
        const reason = stopReason(loaded.view, lifecycleName(loaded), rec.handoffId, who.nameOf);
        if (reason !== undefined) return this.finish(origin, "stopped", reason);
        // The owner must still be allowed to do this (their role may have changed).
        if (!decision.allowed) return this.finish(origin, "failed", `Baton may no longer act for ${who.user.displayName}: ${decision.reason}`);
      }
      const action = step.kind === "notify" ? await this.notify(rec, step, loaded, who.nameOf) : await this.reoffer(rec, step, loaded, policy, who.user);
      const now = this.now();
      const following = rec.steps[rec.nextStep + 1];
      const out = this.store.update(origin, (r) => {
        if (r.state !== "pending") return undefined; // cancelled meanwhile: what was sent stays recorded below
        const moved = action.kind === "reoffer";
        return {
          ...r,
          ...(moved ? { sessionId: action.sessionId, handoffId: action.messageIds[1] as string, target: action.participants[0] as string, sessionIds: [...r.sessionIds, action.sessionId] } : {}),
          done: [...r.done, action],
          nextStep: r.nextStep + 1,
          nextAtMs: following ? now + following.afterMinutes * this.options.minuteMs : 0,
          state: following ? "pending" : "done",
          detail: following ? "" : "Every step ran.",
          inflight: false,
          updatedMs: now,
        };
      });
      if (!out) {
        // Cancelled while the step ran: keep what was sent visible on the chain.
        this.store.update(origin, (r) => ({ ...r, done: [...r.done, action], sessionIds: action.kind === "reoffer" ? [...r.sessionIds, action.sessionId] : r.sessionIds, inflight: false }));
      }
      this.log.info({ origin, step: rec.nextStep, kind: step.kind, sessionId: action.sessionId }, "escalation step ran for the owner");
      const now2 = this.store.get(origin);
      if (now2) this.changed(now2);
    } catch (err) {
      if (err instanceof StepStopped) {
        this.finish(origin, "stopped", err.message);
        return;
      }
      const transient = !(err instanceof StepFailure) || err.transient;
      if (transient) {
        const retry = this.options.retryMs ?? 5_000;
        this.log.warn({ err, origin, retryInMs: retry }, "escalations: a step failed; it is tried again");
        this.store.update(origin, (r) => (r.state === "pending" ? { ...r, nextAtMs: this.now() + retry, updatedMs: this.now() } : undefined));
      } else {
        this.finish(origin, "failed", (err as Error).message);
      }
    } finally {
      this.running.delete(origin);
    }
  }

  private async notify(rec: EscalationRecord, step: EscalationStepInput, loaded: LoadedSession, nameOf: (id: string) => string): Promise<EscalationActionRecord> {
    const ids = stepIds(rec.origin, rec.nextStep);
    const offer = loaded.view.handoff?.offers.find((o) => o.handoffId === rec.handoffId);
    const hooks = this.options.notify?.() ?? null;
    await hooks?.escalated({
      deliveryKey: ids.delivery,
      sessionId: rec.sessionId,
      intent: loaded.view.intent,
      scope: offer?.scope ?? "",
      owner: rec.owner,
      target: rec.target,
      to: [...step.participants],
      involved: [...new Set([rec.owner, rec.target, ...step.participants, ...loaded.view.participants])],
      unansweredMs: offer ? this.now() - offer.offeredAt : 0,
      atMs: this.now(),
    });
    this.log.info({ sessionId: rec.sessionId, to: step.participants.map(nameOf), webhooks: hooks !== null }, "escalation: told the approvers the offer is unanswered");
    return { step: rec.nextStep, kind: "notify", sessionId: rec.sessionId, messageIds: [], cancelledSessionId: "", participants: [...step.participants], atMs: this.now() };
  }

  private async reoffer(rec: EscalationRecord, step: EscalationStepInput, old: LoadedSession, policy: PolicySummary | undefined, user: SignedInUser): Promise<EscalationActionRecord> {
    const next = step.participants[0] as string;
    const ids = stepIds(rec.origin, rec.nextStep);
    const offer = old.view.handoff?.offers.find((o) => o.handoffId === rec.handoffId);
    if (!offer) throw new StepFailure("The offer to escalate is not in the session any more.", false);
    const actions = this.options.actions;
    const names = await actions.names();
    // Mark it in flight first: after a crash the step is finished, not re-judged on the session it cancelled.
    if (!rec.inflight) this.store.update(rec.origin, (r) => (r.state === "pending" ? { ...r, inflight: true } : undefined));
    const request = policyRequestOf(policy);
    const approvers = request.kind === "approval" ? request.approvers : [];
    const fromStart = old.start;
    const scopeExt = fromStart?.extensions[SCOPE_EXTENSION];
    const scope = offer.scope || (scopeExt ? new TextDecoder().decode(scopeExt) : "");
    const ttl = Number(fromStart?.ttlMs ?? 0n);
    const start: StartInput = {
      messageId: ids.start,
      mode: HANDOFF_MODE,
      intent: old.view.intent || scope,
      scope,
      participants: [...new Set([rec.owner, next, ...approvers])],
      ttlMs: ttl >= 60_000 && ttl <= MAX_TTL_MS ? ttl : 3_600_000,
      policy: request,
      frozenContextJson: "",
      contextId: fromStart?.contextId ?? "",
    };
    const newSession = sessionIdForStart(rec.owner, ids.start);
    // 1. Close the unanswered session (its offer can be neither withdrawn nor superseded, §4.4).
    const cancelled = await actions.cancel(user, {
      sessionId: rec.sessionId,
      messageId: ids.cancel,
      reason: `Escalated by Baton for ${user.displayName}: ${names(rec.target)} did not answer in time; handed off to ${names(next)} in session ${newSession}.`,
    });
    if (!cancelled.ok) throw new StepFailure(`Baton could not close the unanswered session: ${cancelled.explanation || cancelled.code}`, cancelled.code === "UNAVAILABLE");
    // An answer can arrive between the check and the cancel (the runtime has no conditional cancel):
    // then nothing is re-offered, and the chain says what happened.
    const after = await actions.decideOn(user, rec.sessionId, "escalate");
    const answered = after.loaded.view.handoff?.offers.find((o) => o.handoffId === rec.handoffId);
    if (answered && (answered.status === "accepted" || answered.status === "declined")) {
      throw new StepStopped(
        `${names(answered.acceptedBy ?? answered.declinedBy ?? answered.target)} ${answered.status} the offer just as Baton closed the session for ${user.displayName}; nothing was re-offered.`,
      );
    }
    // 2. The same handoff, to the next person, in a new session.
    const started = await actions.startSession(user, start);
    if (!started.ok) throw new StepFailure(`Baton could not start the re-offer's session: ${started.explanation || started.code}`, false);
    const offered = await actions.offer(user, {
      sessionId: started.sessionId,
      messageId: ids.offer,
      target: next,
      scope,
      reason: offer.reason ? `${offer.reason} (escalated: ${names(rec.target)} did not answer)` : `Escalated: ${names(rec.target)} did not answer.`,
    });
    if (!offered.ok) throw new StepFailure(`Baton could not re-offer to ${names(next)}: ${offered.explanation || offered.code}`, false);
    // 3. The runbook(s) the owner attached to the unanswered offer.
    const sent = [ids.start, ids.offer];
    const contexts = offer.contexts.filter((c) => c.sender === rec.owner && !c.late);
    for (const [i, c] of contexts.entries()) {
      const r = await actions.attachContext(user, { sessionId: started.sessionId, messageId: ids.context(i), handoffId: ids.offer, contentType: c.contentType, data: c.context, field: "context" });
      if (!r.ok) throw new StepFailure(`Baton could not attach the runbook for ${names(next)}: ${r.explanation || r.code}`, false);
      sent.push(ids.context(i));
    }
    return { step: rec.nextStep, kind: "reoffer", sessionId: started.sessionId, messageIds: sent, cancelledSessionId: rec.sessionId, participants: [next], atMs: this.now() };
  }
}

function lifecycleName(loaded: LoadedSession): string {
  return lifecycleOf(loaded.meta.state);
}

function sameSteps(rec: EscalationRecord, steps: readonly EscalationStepInput[]): boolean {
  const norm = (xs: readonly EscalationStepInput[]) => JSON.stringify(xs.map((x) => [x.kind, x.afterMinutes, [...new Set(x.participants.map((p) => p.trim()))]]));
  return norm(steps) === norm(rec.steps);
}

/** A request's chain checked with the action contract (INVALID_ARGUMENT naming the field). */
export function chainOf(steps: readonly EscalationStepInput[], owner: string, firstTarget: string, field: string): EscalationStepInput[] {
  const c = checkEscalationChain(steps, { owner, firstTarget });
  if (c.problem) {
    const p = c.problem.problem;
    const text =
      p.code === "escalation"
        ? p.detail
        : p.code === "required"
          ? "is required: at least one step"
          : p.code === "not-participant"
            ? "is not a participant id (no spaces, at most 512 characters)"
            : "is not allowed";
    throw invalidField(c.problem.field === "steps" ? field : `${field}${c.problem.field.slice("steps".length)}`, text);
  }
  return c.value;
}
