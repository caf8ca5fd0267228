// Outbound notifications: follows the console catalog's changes, derives the
// events people on call care about (./events.ts), queues one delivery per
// event and interested webhook in a persistent outbox (./outbox.ts) and
// delivers them: bounded concurrency (one request at a time per hook, so a
// healthy hook gets its events in order), a per-request timeout, retries with
// exponential backoff and jitter until a day has passed.
//
// Delivery is at least once: a console stopped during a request sends that
// delivery again at the next start, with the same X-Baton-Delivery id.
import { randomUUID } from "node:crypto";
import { linkedController } from "@/lib/base/abort";
import type { CatalogStore } from "@/lib/gateway/catalog/store";
import type { GatewayLogger } from "@/lib/gateway/logger";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { hookWants, type WebhookConfig } from "./config";
import type { EscalationNotice } from "@/lib/gateway/escalations";
import { deriveEvents, isClosed, snapshotOf, type NotifyEvent } from "./events";
import { genericBody, signBody, slackBody } from "./messages";
import { backoffMs, type NewDelivery, type NotifyStore, type OutboxRow, type StateChange } from "./outbox";

export interface NotifierOptions {
  hooks: readonly WebhookConfig[];
  store: NotifyStore;
  catalog: Pick<CatalogStore, "version" | "changedSince" | "get">;
  /** Identifies the catalog (its file and source): another one means start over. */
  catalogId: string;
  /** Called after every catalog write. */
  onCatalogWrite: (listener: () => void) => () => void;
  /** Participants a policy designates to commit ([] for none or unknown). */
  approvers: (policyId: string) => Promise<readonly string[]>;
  /** Display names of people (and agents) by participant id. */
  names: () => Promise<ReadonlyMap<string, string>>;
  /**
   * False while the catalog is still filling for the first time (a new
   * catalog against a runtime with history): the baseline waits for it, so
   * history is not told as news.
   */
  ready?: () => boolean;
  /** Base of the links back to the console. */
  publicUrl: string;
  logger: GatewayLogger;
  /** Requests in flight over all hooks (default 4). */
  concurrency?: number;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
  /** Give a delivery up once this old (default 24 h). */
  giveUpAfterMs?: number;
  retryBaseMs?: number;
  retryCapMs?: number;
  fetch?: typeof fetch;
  random?: () => number;
}

export interface HookStatus {
  id: string;
  format: string;
  /** The URL's origin only: Slack URLs carry their secret in the path. */
  destination: string;
  pending: number;
  failed: number;
  recent: OutboxRow[];
}

const CHANGE_PAGE = 500;
const KEEP_DELIVERED = 50;
const KEEP_FAILED = 200;
const MAX_PENDING = 10_000;
const CLOSED_TTL_MS = 86_400_000;
/** Statuses worth retrying among 4xx. */
const RETRY_4XX = new Set([408, 425, 429]);

export class Notifier {
  private hooks: readonly WebhookConfig[];
  private readonly closers: (() => void)[] = [];
  private readonly store: NotifyStore;
  private readonly log: GatewayLogger;
  private readonly fetch: typeof fetch;
  private readonly shutdown = new AbortController();
  private stopWatching: (() => void) | null = null;
  private deriving: Promise<void> | null = null;
  private again = false;
  private readonly busy = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private closed = false;

  private get giveUpAfterMs(): number {
    return this.options.giveUpAfterMs ?? 86_400_000;
  }

  constructor(private readonly options: NotifierOptions) {
    this.hooks = options.hooks;
    this.store = options.store;
    this.log = options.logger;
    this.fetch = options.fetch ?? fetch;
  }

  start(): void {
    this.stopWatching = this.options.onCatalogWrite(() => this.derive());
    this.prune();
    this.pruneTimer = setInterval(() => this.prune(), 60_000);
    this.pruneTimer.unref();
    this.derive();
    this.pump();
  }

  /** Replace the hooks (the webhooks file changed): new events go to these; removed hooks' deliveries are dropped. */
  setHooks(hooks: readonly WebhookConfig[]): void {
    if (this.closed) return;
    this.hooks = hooks;
    this.prune();
    this.pump();
  }

  get hookIds(): string[] {
    return this.hooks.map((h) => h.id);
  }

  /** Run `fn` when the notifier closes. */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  /** Per-hook outbox state for admins. */
  status(recent = 20): HookStatus[] {
    return this.hooks.map((h) => ({
      id: h.id,
      format: h.format,
      destination: new URL(h.url).origin,
      pending: this.store.count(h.id, "pending"),
      failed: this.store.count(h.id, "failed"),
      recent: this.store.recent(h.id, recent),
    }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closers.splice(0)) fn();
    this.stopWatching?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.shutdown.abort();
    await this.deriving?.catch(() => undefined);
    await Promise.allSettled([...this.inflight]);
    this.store.close();
  }

  // ------------------------------------------------------------ events

  /**
   * An escalation's NOTIFY step (lib/gateway/escalations/): offer.escalated
   * to the hooks that want it, queued at once. Delivery ids come from the
   * step's key, so a step re-run after a crash queues nothing twice.
   */
  async escalated(notice: EscalationNotice): Promise<void> {
    if (this.closed) return;
    const minutes = Math.max(1, Math.round(notice.unansweredMs / 60_000));
    const event: NotifyEvent = {
      kind: "offer.escalated",
      sessionId: notice.sessionId,
      mode: HANDOFF_MODE,
      intent: notice.intent,
      scope: notice.scope,
      from: notice.owner,
      to: notice.to,
      waitingOn: [notice.target],
      outcome: "",
      detail: `unanswered for ${minutes} min`,
      involved: notice.involved,
      occurredAtMs: notice.atMs,
    };
    const names = await this.names();
    const deliveries: NewDelivery[] = [];
    for (const hook of this.hooks) {
      if (hookWants(hook, event.kind, event.involved))
        deliveries.push({ ...this.delivery(hook, event, names), deliveryId: `${notice.deliveryKey}-${hook.id}` });
    }
    if (deliveries.length === 0 || this.closed) return;
    this.store.enqueue(deliveries);
    this.pump();
  }

  /** Derive events for the catalog changes after the cursor (serialized; coalesces calls). */
  private derive(): void {
    if (this.closed) return;
    if (this.deriving) {
      this.again = true;
      return;
    }
    this.deriving = (async () => {
      do {
        this.again = false;
        try {
          while (!this.closed && (await this.step())) {
            /* more pages */
          }
        } catch (err) {
          this.log.error({ err }, "webhooks: deriving events failed; retrying on the next catalog change");
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.deriving = null;
    });
  }

  /** One page of changes; true when more may follow. */
  private async step(): Promise<boolean> {
    const catalog = this.options.catalog;
    const cursor = this.store.cursor;
    if (cursor === null || this.store.catalogId !== this.options.catalogId || cursor > catalog.version) {
      // First start (or another catalog): what is already there is the
      // baseline; only what changes from now on is told.
      if (this.options.ready && !this.options.ready()) {
        this.retryTimer ??= setTimeout(() => {
          this.retryTimer = null;
          this.derive();
        }, 1_000);
        this.retryTimer.unref();
        return false;
      }
      this.store.rebase(this.options.catalogId, 0);
      this.baseline();
      return false;
    }
    let limit = CHANGE_PAGE;
    let c = catalog.changedSince(cursor, limit);
    while (c.overflow && c.through - 1 <= cursor) {
      limit *= 4; // one write holds more rows than a page: read it whole
      c = catalog.changedSince(cursor, limit);
    }
    if (c.ids.length === 0) {
      if (c.version !== cursor) this.store.commit([], [], c.version);
      return false;
    }
    const names = await this.names();
    const changes: StateChange[] = [];
    const deliveries: NewDelivery[] = [];
    const now = Date.now();
    for (const id of c.ids) {
      const row = catalog.get(id);
      // v0.1 file rows are not MACP sessions: webhooks are about sessions.
      if (!row?.summary.metadata || row.kind === "file") continue;
      const before = this.store.state(id);
      if (before?.closed) continue;
      const after = snapshotOf(row.summary);
      const closed = isClosed(after.state);
      if (!before && closed && Number(row.summary.lastActivityUnixMs) < now - CLOSED_TTL_MS) continue; // old history, not news
      let approvers: readonly string[] = [];
      const meta = row.summary.metadata;
      // The approvers are told when an offer starts waiting (approval.upcoming) and when it is accepted (approval.needed).
      if (meta.mode === HANDOFF_MODE && (before?.snapshot.phase !== after.phase || before?.snapshot.target !== after.target)) {
        approvers = await this.options.approvers(meta.policyVersion).catch((err: unknown) => {
          this.log.warn({ err, policy: meta.policyVersion }, "webhooks: could not read a session's policy (approvers not told)");
          return [];
        });
      }
      for (const event of deriveEvents(before?.snapshot, row.summary, row.nextActors, approvers)) {
        // Catching up after a long stop: what is older than a delivery may live is not news.
        if (event.occurredAtMs > 0 && event.occurredAtMs < now - this.giveUpAfterMs) continue;
        for (const hook of this.hooks) {
          if (hookWants(hook, event.kind, event.involved)) deliveries.push(this.delivery(hook, event, names));
        }
      }
      changes.push({ sessionId: id, snapshot: after, closed });
    }
    if (this.closed) return false;
    const next = c.overflow ? Math.max(cursor, c.through - 1) : c.version;
    this.store.commit(changes, deliveries, next);
    if (deliveries.length > 0) this.pump();
    return c.overflow;
  }

  private baseline(): void {
    const catalog = this.options.catalog;
    const version = catalog.version;
    let seen = 0;
    for (;;) {
      let limit = CHANGE_PAGE;
      let c = catalog.changedSince(seen, limit);
      while (c.overflow && c.through - 1 <= seen) {
        limit *= 4;
        c = catalog.changedSince(seen, limit);
      }
      const changes: StateChange[] = [];
      const now = Date.now();
      for (const id of c.ids) {
        const row = catalog.get(id);
        if (!row?.summary.metadata || row.kind === "file") continue;
        const snap = snapshotOf(row.summary);
        const closed = isClosed(snap.state);
        if (closed && Number(row.summary.lastActivityUnixMs) < now - CLOSED_TTL_MS) continue;
        changes.push({ sessionId: id, snapshot: snap, closed });
      }
      seen = c.overflow ? Math.max(seen, c.through - 1) : Math.max(c.version, version);
      this.store.commit(changes, [], c.overflow ? seen : Math.min(seen, version));
      if (!c.overflow) break;
    }
    this.log.info({ hooks: this.hooks.map((h) => h.id), from: this.store.cursor }, "webhooks: following the catalog from now on");
  }

  private async names(): Promise<ReadonlyMap<string, string>> {
    try {
      return await this.options.names();
    } catch (err) {
      this.log.warn({ err }, "webhooks: display names unavailable; ids are used");
      return new Map();
    }
  }

  private delivery(hook: WebhookConfig, event: NotifyEvent, names: ReadonlyMap<string, string>): NewDelivery {
    const nameOf = (id: string) => names.get(id);
    const body =
      hook.format === "slack" ? slackBody(event, this.options.publicUrl, nameOf) : genericBody(event, this.options.publicUrl, nameOf);
    return { deliveryId: randomUUID(), hookId: hook.id, event: event.kind, sessionId: event.sessionId, body };
  }

  // ------------------------------------------------------------ delivery

  /** Start every delivery that is due, within the concurrency bound; arm a timer for the next one. */
  private pump(): void {
    if (this.closed) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const limit = this.options.concurrency ?? 4;
    const now = Date.now();
    for (const hook of this.hooks) {
      if (this.busy.size >= limit) return; // a finishing request pumps again
      if (this.busy.has(hook.id)) continue;
      const row = this.store.due(hook.id, now);
      if (!row) continue;
      this.busy.add(hook.id);
      const p = this.send(hook, row)
        .catch((err: unknown) => this.log.error({ err, hook: hook.id }, "webhooks: delivery bookkeeping failed"))
        .finally(() => {
          this.busy.delete(hook.id);
          this.inflight.delete(p);
          this.pump();
        });
      this.inflight.add(p);
    }
    // Wake for the next retry of an idle hook (a busy one pumps again when its request ends).
    let next: number | undefined;
    for (const hook of this.hooks) {
      if (this.busy.has(hook.id)) continue;
      const t = this.store.nextDueMs(hook.id);
      if (t !== undefined && (next === undefined || t < next)) next = t;
    }
    if (next !== undefined) {
      this.timer = setTimeout(() => this.pump(), Math.max(10, next - Date.now()));
      this.timer.unref();
    }
  }

  private async send(hook: WebhookConfig, row: OutboxRow): Promise<void> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "Baton-Webhooks/1",
      "x-baton-event": row.event,
      "x-baton-delivery": row.deliveryId,
      "x-baton-timestamp": String(Math.floor(Date.now() / 1000)),
    };
    if (hook.secret !== null) headers["x-baton-signature"] = signBody(hook.secret, row.body);
    // Linked by hand, not AbortSignal.any: on Node 20 every combined signal
    // would stay attached to the long-lived shutdown signal (lib/base/abort.ts).
    const call = linkedController(this.shutdown.signal);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      call.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    }, this.options.timeoutMs ?? 10_000);
    let status = 0;
    let error = "";
    try {
      const res = await this.fetch(hook.url, {
        method: "POST",
        headers,
        body: row.body,
        redirect: "manual",
        signal: call.signal,
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (status >= 200 && status < 300) {
        this.store.recordAttempt(row.n, "delivered", status, "", 0);
        return;
      }
      error = `HTTP ${status}`;
    } catch (e) {
      if (this.shutdown.signal.aborted) return; // not an attempt: sent again at the next start
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      error = timedOut ? `timed out after ${this.options.timeoutMs ?? 10_000} ms` : (cause?.code ?? cause?.message ?? (e as Error).message);
    } finally {
      clearTimeout(timer);
      call.abort(); // detaches it from the shutdown signal
    }
    const attempts = row.attempts + 1;
    const now = Date.now();
    const permanent = status >= 400 && status < 500 && !RETRY_4XX.has(status);
    const wait = backoffMs(attempts, this.options.random, this.options.retryBaseMs, this.options.retryCapMs);
    const expired = now + wait > row.createdMs + this.giveUpAfterMs;
    if (permanent || expired) {
      this.store.recordAttempt(row.n, "failed", status, error, 0, now);
      this.log.warn(
        { hook: hook.id, delivery: row.deliveryId, event: row.event, attempts, error },
        `webhooks: gave up a delivery (${permanent ? "refused" : "too old"})`,
      );
    } else {
      this.store.recordAttempt(row.n, "pending", status, error, now + wait, now);
      this.log.warn(
        { hook: hook.id, delivery: row.deliveryId, event: row.event, attempts, error, retryInMs: wait },
        "webhooks: delivery failed; retrying",
      );
    }
  }

  private prune(): void {
    try {
      const dropped = this.store.prune(
        this.hooks.map((h) => h.id),
        KEEP_DELIVERED,
        KEEP_FAILED,
        MAX_PENDING,
        CLOSED_TTL_MS,
      );
      if (dropped > 0)
        this.log.warn({ dropped }, `webhooks: more than ${MAX_PENDING} deliveries waited for one hook; the oldest were dropped`);
    } catch (err) {
      this.log.error({ err }, "webhooks: pruning the outbox failed");
    }
  }
}
