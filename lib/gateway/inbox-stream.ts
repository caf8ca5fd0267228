// The inbox stream for one person (ActionService.WatchInbox): the items of
// lib/gateway/inbox.ts for every open session the catalog feeder follows, the
// approvals ahead, escalation notices and the news of lib/gateway/inbox-news.ts,
// sent whole whenever they change, with heartbeats in between.
import { create } from "@bufbuild/protobuf";
import {
  InboxItemKind,
  InboxUpdateSchema,
  WatchInboxResponseSchema,
  type InboxItem,
  type InboxUpdate,
  type WatchInboxResponse,
} from "@/lib/gen/baton/v1/actions_pb";
import { HeartbeatSchema } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { shortParticipantName, type Actor } from "@/lib/authz/decide";
import type { PolicySummary } from "@/lib/authz/policy-summary";
import { DEFAULT_POLICY_ID } from "@/lib/macp/constants";
import type { SessionView } from "@/lib/macp/projections/session";
import type { GatewayLogger } from "./logger";
import type { PolicyCache } from "./policies";
import type { CatalogFeeder } from "./catalog/feeder";
import { approvalAheadFor, decideContextOf, inboxItemsFor, item, type InboxContext } from "./inbox";
import { acceptedNewsFor, newsFor, type RecentClosed } from "./inbox-news";

function signature(items: readonly InboxItem[]): string {
  return items
    .map((i) => `${i.kind}\u0000${i.subjectId}\u0000${i.fromParticipant}\u0000${i.sinceUnixMs}\u0000${i.expiresAtUnixMs}\u0000${i.summary}`)
    .join("\u0001");
}

export interface InboxOptions {
  /** The open sessions (the catalog feeder). */
  feeder: Pick<CatalogFeeder, "observeOpen">;
  policies: PolicyCache;
  logger: GatewayLogger;
  heartbeatMs?: number;
  /** Coalescing window for changes. Default 25 ms. */
  flushMs?: number;
  now?: () => number;
  /** Escalation chains whose "tell" step named people (lib/gateway/escalations/). */
  escalations?: EscalationNotices;
  /** The catalog's recently closed sessions, for the news (lib/gateway/inbox-news.ts); no closed-session news without it. */
  recentClosed?: RecentClosed;
}

/** Who an escalation chain told that a session's offer is unanswered, while the chain runs. */
export interface EscalationNotices {
  /** The running chain's last "tell" in this session, if any. */
  noticeFor(sessionId: string): { owner: string; target: string; to: readonly string[]; sinceMs: number } | undefined;
  /** Told with the session id whenever a chain changes; returns the unsubscribe. */
  onChange(listener: (sessionId: string) => void): () => void;
}

/**
 * The inbox stream for one person: an InboxUpdate once the session index
 * has loaded, then one after every change, with heartbeats in between.
 */
export async function* watchInbox(
  options: InboxOptions,
  user: Actor,
  nameOf: (participantId: string) => string,
  signal: AbortSignal,
): AsyncGenerator<WatchInboxResponse> {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const flushMs = options.flushMs ?? 25;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, { meta: SessionMetadata; view: SessionView }>();
  const items = new Map<string, InboxItem[]>();
  const ahead = new Map<string, InboxItem>();
  const accepted = new Map<string, InboxItem>();
  let news: InboxItem[] = [];
  let loaded = false;
  let dirty = false;
  /** A session closed (or the closed sessions' read was throttled): look at the news again at the next flush. */
  let newsCheck = true;
  let newsTimer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const names = (id: string) => nameOf(id) || shortParticipantName(id);

  const recompute = (id: string): void => {
    const s = sessions.get(id);
    if (!s) return;
    const policyId = s.meta.policyVersion;
    let policy: PolicySummary | undefined;
    if (policyId !== "" && policyId !== DEFAULT_POLICY_ID) {
      policy = options.policies.peek(policyId);
      if (!policy) {
        options.policies.summary(policyId).then(
          (p) => {
            if (p && !ended.signal.aborted) {
              recompute(id);
              poke();
            }
          },
          (err: unknown) => options.logger.warn({ err, policyId }, "inbox: could not read a session's policy"),
        );
      }
    }
    const ctx: InboxContext = { ...(policy ? { policy } : {}), nameOf: names, now: now() };
    const next = inboxItemsFor(user, s.meta, s.view, ctx);
    const notice = options.escalations?.noticeFor(id);
    if (notice && notice.to.includes(user.participantId) && s.meta.state === SessionState.OPEN && next.length === 0) {
      const scope = s.view.handoff?.offers.at(-1)?.scope ?? "";
      next.push(
        item({
          kind: InboxItemKind.ESCALATION,
          meta: s.meta,
          view: s.view,
          scope,
          from: notice.owner,
          subject: id,
          since: notice.sinceMs,
          summary: `${names(notice.owner)}'s offer of ${scope || "a handoff"} to ${notice.target === user.participantId ? "you" : names(notice.target)} is unanswered; Baton told you for ${names(notice.owner)}.`,
        }),
      );
    }
    const before = items.get(id) ?? [];
    if (signature(before) !== signature(next)) {
      if (next.length === 0) items.delete(id);
      else items.set(id, next);
      dirty = true;
    }
    const told = acceptedNewsFor(user, s.meta, s.view, decideContextOf(s.meta, ctx), names);
    const knew = accepted.get(id);
    if (signature(knew ? [knew] : []) !== signature(told ? [told] : [])) {
      if (told) accepted.set(id, told);
      else accepted.delete(id);
      newsCheck = true;
    }
    const soon = approvalAheadFor(user, s.meta, s.view, ctx);
    const was = ahead.get(id);
    if (signature(was ? [was] : []) !== signature(soon ? [soon] : [])) {
      if (soon) ahead.set(id, soon);
      else ahead.delete(id);
      dirty = true;
    }
  };

  const ended = new AbortController();
  const unwatch = options.escalations?.onChange((id) => {
    recompute(id);
    if (dirty) poke();
  });
  ended.signal.addEventListener("abort", () => unwatch?.(), { once: true });
  const stop = () => ended.abort();
  signal.addEventListener("abort", stop, { once: true });
  try {
    options.feeder.observeOpen(
      {
        update(meta, view) {
          sessions.set(meta.sessionId, { meta, view });
          recompute(meta.sessionId);
          if (dirty || newsCheck) poke();
        },
        closed(sessionId) {
          sessions.delete(sessionId);
          // Its accepted-offer news goes, and it may be news for this person now (committed, expired, cancelled).
          if (accepted.delete(sessionId) || options.recentClosed) newsCheck = true;
          if (items.delete(sessionId) || ahead.delete(sessionId)) dirty = true;
          if (dirty || newsCheck) poke();
        },
        loaded() {
          loaded = true;
          dirty = true;
          poke();
        },
      },
      ended.signal,
    );
    let nextHeartbeat = Date.now() + heartbeatMs;
    while (!ended.signal.aborted) {
      if (!(loaded && (dirty || newsCheck))) {
        const wait = nextHeartbeat - Date.now();
        if (wait > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, wait);
            function done() {
              clearTimeout(timer);
              ended.signal.removeEventListener("abort", done);
              wake = null;
              resolve();
            }
            ended.signal.addEventListener("abort", done, { once: true });
            wake = done;
          });
        }
        if (ended.signal.aborted) return;
        if (Date.now() >= nextHeartbeat) {
          nextHeartbeat = Date.now() + heartbeatMs;
          yield create(WatchInboxResponseSchema, {
            item: { case: "heartbeat", value: create(HeartbeatSchema, { serverTimeUnixMs: BigInt(Date.now()) }) },
          });
        }
        continue;
      }
      // Let a burst of changes settle into one update.
      if (flushMs > 0) await new Promise((r) => setTimeout(r, flushMs));
      if (ended.signal.aborted) return;
      if (newsCheck) {
        newsCheck = false;
        let closedRows: Parameters<typeof newsFor>[2] = [];
        if (options.recentClosed) {
          const read = options.recentClosed.read();
          closedRows = read.rows;
          // Read too recently to see the latest change: look again once a read is allowed.
          if (read.staleForMs > 0 && !newsTimer)
            newsTimer = setTimeout(() => {
              newsTimer = undefined;
              newsCheck = true;
              poke();
            }, read.staleForMs + 10);
        }
        const next = newsFor(user, accepted.values(), closedRows, names, now());
        if (signature(next) !== signature(news)) {
          news = next;
          dirty = true;
        }
        if (!dirty) continue;
      }
      dirty = false;
      const bySince = (a: InboxItem, b: InboxItem) => (a.sinceUnixMs < b.sinceUnixMs ? -1 : a.sinceUnixMs > b.sinceUnixMs ? 1 : 0);
      const all = [...items.values()].flat().sort(bySince);
      yield create(WatchInboxResponseSchema, {
        item: {
          case: "update",
          value: create(InboxUpdateSchema, { items: all, count: all.length, ahead: [...ahead.values()].sort(bySince), news }),
        },
      });
    }
  } finally {
    signal.removeEventListener("abort", stop);
    if (newsTimer) clearTimeout(newsTimer);
    ended.abort();
  }
}

/**
 * The inbox's first update for one person, as the stream would send it first
 * (for the /inbox page's server-rendered first view): undefined when the
 * session index has not loaded within `timeoutMs`, or `signal` ends first.
 * Rides on the open sessions like the stream, and stops observing them once
 * it has its answer.
 */
export async function firstInboxUpdate(
  options: InboxOptions,
  user: Actor,
  nameOf: (participantId: string) => string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<InboxUpdate | undefined> {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  const timer = setTimeout(stop, timeoutMs);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    // No coalescing window (the first update comes at once), no heartbeat before the timeout.
    for await (const m of watchInbox({ ...options, flushMs: 0, heartbeatMs: timeoutMs + 60_000 }, user, nameOf, ac.signal)) {
      if (m.item.case === "update") return m.item.value;
    }
    return undefined;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
    ac.abort();
  }
}
