// Delivering what the outbox holds (./outbox.ts) to the webhooks: bounded
// concurrency (one request at a time per hook, so a healthy hook gets its
// events in order), a per-request timeout, retries with exponential backoff
// and jitter until a delivery is too old, and the outbox kept bounded.
//
// Delivery is at least once: a request cut by shutdown is not an attempt,
// and is sent again at the next start with the same X-Baton-Delivery id.
import { linkedController } from "@/lib/base/abort";
import type { GatewayLogger } from "@/lib/gateway/logger";
import type { WebhookConfig } from "./config";
import { signBody } from "./messages";
import { backoffMs, type NotifyStore, type OutboxRow } from "./outbox";

export interface DeliveryOptions {
  /** The hooks now (the webhooks file can change). */
  hooks: () => readonly WebhookConfig[];
  store: NotifyStore;
  logger: GatewayLogger;
  /** Aborts requests in flight at shutdown. */
  shutdown: AbortSignal;
  /** Requests in flight over all hooks (default 4). */
  concurrency?: number;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
  /** Give a delivery up once this old. */
  giveUpAfterMs: number;
  retryBaseMs?: number;
  retryCapMs?: number;
  fetch?: typeof fetch;
  random?: () => number;
}

const KEEP_DELIVERED = 50;
const KEEP_FAILED = 200;
const MAX_PENDING = 10_000;
/** Statuses worth retrying among 4xx. */
const RETRY_4XX = new Set([408, 425, 429]);

export class Deliveries {
  private readonly store: NotifyStore;
  private readonly log: GatewayLogger;
  private readonly fetch: typeof fetch;
  private readonly busy = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: DeliveryOptions) {
    this.store = options.store;
    this.log = options.logger;
    this.fetch = options.fetch ?? fetch;
  }

  /** Stop starting requests; resolves when those in flight have ended. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inflight]);
  }

  /** Start every delivery that is due, within the concurrency bound; arm a timer for the next one. */
  pump(): void {
    if (this.closed) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const hooks = this.options.hooks();
    const limit = this.options.concurrency ?? 4;
    const now = Date.now();
    for (const hook of hooks) {
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
    for (const hook of hooks) {
      if (this.busy.has(hook.id)) continue;
      const t = this.store.nextDueMs(hook.id);
      if (t !== undefined && (next === undefined || t < next)) next = t;
    }
    if (next !== undefined) {
      this.timer = setTimeout(() => this.pump(), Math.max(10, next - Date.now()));
      this.timer.unref();
    }
  }

  /** Drop what no hook needs kept: old delivered and failed rows, removed hooks' rows, the oldest beyond MAX_PENDING. */
  prune(closedTtlMs: number): void {
    try {
      const dropped = this.store.prune(
        this.options.hooks().map((h) => h.id),
        KEEP_DELIVERED,
        KEEP_FAILED,
        MAX_PENDING,
        closedTtlMs,
      );
      if (dropped > 0)
        this.log.warn({ dropped }, `webhooks: more than ${MAX_PENDING} deliveries waited for one hook; the oldest were dropped`);
    } catch (err) {
      this.log.error({ err }, "webhooks: pruning the outbox failed");
    }
  }

  private async send(hook: WebhookConfig, row: OutboxRow): Promise<void> {
    const shutdown = this.options.shutdown;
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
    const call = linkedController(shutdown);
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
      if (shutdown.aborted) return; // not an attempt: sent again at the next start
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
    const expired = now + wait > row.createdMs + this.options.giveUpAfterMs;
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
}
