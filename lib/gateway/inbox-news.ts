// The inbox's news (InboxUpdate.news): what a person should hear about the
// sessions they started when nothing waits on them, so an owner is told the
// whole story and not only the moments they must act:
//   - ACCEPTED: their offer was accepted and someone else commits it (an
//     approver the policy designates); from the open session's folded view;
//   - CLOSED: a session they started was committed (with its outcome),
//     expired or was cancelled in the last NEWS_WINDOW_MS; from the catalog's
//     rows, through RecentClosed below.
// Not counted in the badge; the browser notifies once per item and lets the
// person dismiss it. Bounded: at most NEWS_MAX items per person.
import { create } from "@bufbuild/protobuf";
import { InboxItemKind, InboxItemSchema, type InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { decide, type Actor, type DecideContext } from "@/lib/authz/decide";
import { TASK_MODE } from "@/lib/macp/constants";
import type { SessionView } from "@/lib/macp/projections/session";
import type { CatalogStore } from "./catalog/store";

/** Closed sessions are news for this long after their last activity. */
export const NEWS_WINDOW_MS = 24 * 60 * 60 * 1000;
/** At most this many news items per person, newest first. */
export const NEWS_MAX = 10;
/** The newest closed sessions RecentClosed looks at (whoever started them). */
export const RECENT_CLOSED_SCAN = 500;
/** RecentClosed reads the catalog at most this often. */
export const RECENT_CLOSED_REFRESH_MS = 1_000;

/** "Dave Park accepted payments on-call; Carol Lee commits it." for the owner, when someone else commits. Pure. */
export function acceptedNewsFor(
  user: Actor,
  meta: SessionMetadata,
  view: SessionView | undefined,
  dctx: DecideContext,
  nameOf: (id: string) => string,
): InboxItem | undefined {
  if (!view?.started || !view.handoff || meta.state !== SessionState.OPEN || view.commitment) return undefined;
  const accepted = view.handoff.offers.find((o) => o.status === "accepted");
  if (!accepted) return undefined;
  const owner = accepted.offeredBy || view.initiator;
  if (user.participantId !== owner) return undefined;
  // The owner who may commit has an APPROVAL item instead: this is only for when someone else does.
  if (decide(user, view, "commit", dctx).allowed) return undefined;
  const by = accepted.acceptedBy ?? accepted.target;
  const what = accepted.scope || "the handoff";
  return create(InboxItemSchema, {
    kind: InboxItemKind.ACCEPTED,
    sessionId: meta.sessionId,
    mode: meta.mode,
    intent: view.intent,
    scope: accepted.scope,
    fromParticipant: by,
    subjectId: accepted.handoffId,
    sinceUnixMs: BigInt(Math.trunc(accepted.respondedAt ?? accepted.offeredAt)),
    expiresAtUnixMs: meta.expiresAtUnixMs,
    summary: `${nameOf(by)} accepted ${what}; the approver commits it, nothing to do for you.`,
  });
}

/** The news of a closed session for the person who started it, or undefined. Pure. */
export function closedNewsFor(user: Actor, row: SessionSummary, nameOf: (id: string) => string): InboxItem | undefined {
  const meta = row.metadata;
  if (!meta || meta.initiator !== user.participantId || row.fileHandoff) return undefined;
  const task = meta.mode === TASK_MODE;
  const what = row.scope || row.intent || (task ? "the task" : "the handoff");
  let summary: string;
  let from = "";
  switch (meta.state) {
    case SessionState.RESOLVED:
      if (task) summary = `"${what}" was committed${row.outcome === "negative" ? " as not done" : ""}.`;
      else if (row.outcome === "negative") summary = `${what} stays with you: the handoff was committed without a change of owner.`;
      else {
        from = row.currentOwner;
        summary = row.currentOwner
          ? `${nameOf(row.currentOwner)} now holds ${what}: the handoff is committed.`
          : `The handoff of ${what} is committed.`;
      }
      break;
    case SessionState.EXPIRED:
      summary = `${what} expired before anyone committed it.`;
      break;
    case SessionState.CANCELLED:
      summary = `${what} was cancelled.`;
      break;
    default:
      return undefined;
  }
  return create(InboxItemSchema, {
    kind: InboxItemKind.CLOSED,
    sessionId: meta.sessionId,
    mode: meta.mode,
    intent: row.intent,
    scope: row.scope,
    fromParticipant: from,
    subjectId: meta.sessionId,
    sinceUnixMs: row.lastActivityUnixMs,
    expiresAtUnixMs: 0n,
    summary,
  });
}

/**
 * The newest closed sessions of the catalog (at most RECENT_CLOSED_SCAN, with
 * activity in the last NEWS_WINDOW_MS), shared by every inbox stream: read
 * through the activity index when the catalog changed, at most once per
 * RECENT_CLOSED_REFRESH_MS, so its cost follows the sessions that closed
 * lately, not the history or the number of people watching.
 */
export class RecentClosed {
  private rows: SessionSummary[] = [];
  private readAt = -Infinity;
  private readVersion = -1;

  constructor(
    private readonly catalog: Pick<CatalogStore, "page" | "version">,
    private readonly now: () => number = Date.now,
  ) {}

  /** The rows as of at most RECENT_CLOSED_REFRESH_MS ago, and how long until a read would see the catalog's latest change (0: they do). */
  read(): { rows: readonly SessionSummary[]; staleForMs: number } {
    const now = this.now();
    const changed = this.catalog.version !== this.readVersion;
    if (changed && now - this.readAt >= RECENT_CLOSED_REFRESH_MS) {
      this.readVersion = this.catalog.version;
      this.readAt = now;
      this.rows = this.catalog.page(
        { participant: "", text: "", sort: "activity", ascending: false, closed: true, activeSince: now - NEWS_WINDOW_MS },
        0,
        RECENT_CLOSED_SCAN,
      ).rows;
    }
    const behind = this.catalog.version !== this.readVersion;
    return { rows: this.rows, staleForMs: behind ? Math.max(0, this.readAt + RECENT_CLOSED_REFRESH_MS - now) : 0 };
  }
}

/** One person's news: accepted offers of open sessions and their recently closed sessions, newest first, at most NEWS_MAX. */
export function newsFor(
  user: Actor,
  accepted: Iterable<InboxItem>,
  closed: readonly SessionSummary[],
  nameOf: (id: string) => string,
  now: number,
): InboxItem[] {
  const out: InboxItem[] = [...accepted];
  for (const row of closed) {
    if (Number(row.lastActivityUnixMs) < now - NEWS_WINDOW_MS) continue;
    const item = closedNewsFor(user, row, nameOf);
    if (item) out.push(item);
  }
  return out.sort((a, b) => (a.sinceUnixMs > b.sinceUnixMs ? -1 : a.sinceUnixMs < b.sinceUnixMs ? 1 : 0)).slice(0, NEWS_MAX);
}
