// Outbound notifications: follows the console catalog's changes, derives the
// events people on call care about (./events.ts) and queues one delivery per
// event and interested webhook in a persistent outbox (./outbox.ts), which
// ./delivery.ts delivers (at least once, with retries until a day has passed).
import { randomUUID } from "node:crypto";
import type { CatalogStore } from "@/lib/gateway/catalog/store";
import type { GatewayLogger } from "@/lib/gateway/logger";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { hookWants, type WebhookConfig } from "./config";
import type { EscalationNotice } from "@/lib/gateway/escalations";
import { deriveEvents, isClosed, snapshotOf, type NotifyEvent } from "./events";
import { Deliveries } from "./delivery";
import { genericBody, slackBody } from "./messages";
import type { NewDelivery, NotifyStore, OutboxRow, StateChange } from "./outbox";

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
const CLOSED_TTL_MS = 86_400_000;

export class Notifier {
  private hooks: readonly WebhookConfig[];
  private readonly closers: (() => void)[] = [];
  private readonly store: NotifyStore;
  private readonly log: GatewayLogger;
  private readonly deliveries: Deliveries;
  private readonly shutdown = new AbortController();
  private stopWatching: (() => void) | null = null;
  private deriving: Promise<void> | null = null;
  private again = false;
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
    this.deliveries = new Deliveries({
      hooks: () => this.hooks,
      store: options.store,
      logger: options.logger,
      shutdown: this.shutdown.signal,
      giveUpAfterMs: this.giveUpAfterMs,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
      ...(options.retryCapMs !== undefined ? { retryCapMs: options.retryCapMs } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.random ? { random: options.random } : {}),
    });
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
    const delivered = this.deliveries.close();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.shutdown.abort();
    await this.deriving?.catch(() => undefined);
    await delivered;
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

  private pump(): void {
    if (this.closed) return;
    this.deliveries.pump();
  }

  private prune(): void {
    this.deliveries.prune(CLOSED_TTL_MS);
  }
}
