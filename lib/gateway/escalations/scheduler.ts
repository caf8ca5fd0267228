// The scheduler that runs escalation chains for their owners: one timer for
// the earliest due chain (overdue ones fired once at start), the catalog's
// writes watched to stop chains whose offer was answered, and each step
// (steps.ts) re-reading the session and asking decide() before it acts.
import { Code, ConnectError } from "@connectrpc/connect";
import type { EscalationStepInput } from "@/lib/actions/rules";
import type { UserRecord } from "@/lib/accounts/users-file";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import type { ActionGateway } from "../actions";
import type { SignedInUser } from "../identity";
import { silentLogger, type GatewayLogger } from "../logger";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import { pendingOffer } from "../actions/results";
import { lifecycleOf, type LoadedSession } from "../session-state";
import { chainOf, sameSteps, stopReason, type EscalationHooks, type EscalationRecord, type EscalationStateName } from "./model";
import { notifyStep, reofferStep, StepFailure, StepStopped, type StepDeps } from "./steps";
import type { EscalationStore } from "./store";

export interface EscalationsOptions {
  store: EscalationStore;
  actions: ActionGateway;
  users: { users(): Promise<readonly UserRecord[]> };
  /** How long one "minute" of a chain is (BATON_ESCALATION_MINUTE_MS; 60 000 outside tests). */
  minuteMs: number;
  /** The webhooks' path for offer.escalated (null: no webhooks configured). */
  notify?: () => EscalationHooks | null;
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
  private readonly steps: StepDeps;

  constructor(private readonly options: EscalationsOptions) {
    this.store = options.store;
    this.log = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.steps = {
      store: this.store,
      actions: options.actions,
      ...(options.notify ? { notify: options.notify } : {}),
      log: this.log,
      now: this.now,
    };
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
  async create(
    user: SignedInUser,
    sessionId: string,
    steps: readonly EscalationStepInput[],
    signal?: AbortSignal,
  ): Promise<EscalationRecord> {
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
    this.log.info(
      { sessionId, owner: user.participantId, steps: chain.length, nextAt: new Date(rec.nextAtMs).toISOString() },
      "escalation set up",
    );
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
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.kick();
      },
      Math.max(0, Math.min(next - this.now(), 2 ** 31 - 1)),
    );
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
    const out = this.store.update(origin, (r) =>
      r.state === "pending" ? { ...r, state, nextAtMs: 0, inflight: false, detail, updatedMs: this.now() } : undefined,
    );
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
        if (!decision.allowed)
          return this.finish(origin, "failed", `Baton may no longer act for ${who.user.displayName}: ${decision.reason}`);
      }
      const action =
        step.kind === "notify"
          ? await notifyStep(this.steps, rec, step, loaded, who.nameOf)
          : await reofferStep(this.steps, rec, step, loaded, policy, who.user);
      const now = this.now();
      const following = rec.steps[rec.nextStep + 1];
      const out = this.store.update(origin, (r) => {
        if (r.state !== "pending") return undefined; // cancelled meanwhile: what was sent stays recorded below
        const moved = action.kind === "reoffer";
        return {
          ...r,
          ...(moved
            ? {
                sessionId: action.sessionId,
                handoffId: action.messageIds[1] as string,
                target: action.participants[0] as string,
                sessionIds: [...r.sessionIds, action.sessionId],
              }
            : {}),
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
        this.store.update(origin, (r) => ({
          ...r,
          done: [...r.done, action],
          sessionIds: action.kind === "reoffer" ? [...r.sessionIds, action.sessionId] : r.sessionIds,
          inflight: false,
        }));
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
        this.store.update(origin, (r) =>
          r.state === "pending" ? { ...r, nextAtMs: this.now() + retry, updatedMs: this.now() } : undefined,
        );
      } else {
        this.finish(origin, "failed", (err as Error).message);
      }
    } finally {
      this.running.delete(origin);
    }
  }
}

function lifecycleName(loaded: LoadedSession): string {
  return lifecycleOf(loaded.meta.state);
}
