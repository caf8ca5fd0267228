// The session list query of ListSessionPage and WatchSessionChanges, checked
// at the edge: every field of a browser's SessionListQuery is validated and
// turned into a CatalogQuery the store can run as an indexed query. Bad input
// is refused with INVALID_ARGUMENT and a sentence naming the field; nothing
// the browser sends is ever interpreted as SQL or FTS syntax.
import { Code, ConnectError } from "@connectrpc/connect";
import type { SessionListQuery } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { FILE_HANDOFF_MODE, HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";

export const SORT_KEYS = ["activity", "started", "ttl", "intent", "phase", "state", "mode", "owner", "target"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** State keys in list order (the order of the "state" sort). */
export const STATE_KEYS = ["open", "suspended", "resolved", "expired", "cancelled"] as const;
export type StateKey = (typeof STATE_KEYS)[number];
export const STATE_BY_KEY: Readonly<Record<StateKey, SessionState>> = {
  open: SessionState.OPEN,
  suspended: SessionState.SUSPENDED,
  resolved: SessionState.RESOLVED,
  expired: SessionState.EXPIRED,
  cancelled: SessionState.CANCELLED,
};

/** Projection phases in list order (the order of the "phase" sort; lib/views/labels.ts PHASE_INFO). */
export const PHASE_ORDER = [
  "Pending",
  "OfferPending",
  "ContextSharing",
  "Accepted",
  "Declined",
  "Committed",
  "Requested",
  "InProgress",
  "Completed",
  "Failed",
] as const;

/** Mode keys of the list's URL and query; "file": v0.1 file handoffs (not an MACP mode). */
export const MODE_KEYS: Readonly<Record<string, string>> = { handoff: HANDOFF_MODE, task: TASK_MODE, file: FILE_HANDOFF_MODE };

/** Longest participant or text filter (the browser caps its inputs at 200 too). */
export const MAX_FILTER_CHARS = 200;
/** Largest page ListSessionPage returns. */
export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 100;

export interface CatalogQuery {
  /** Mode URI, or undefined for all. */
  mode?: string;
  state?: SessionState;
  phase?: string;
  /** Lowercased substring of a participant id; "" for all. */
  participant: string;
  /** Lowercased full-text needle; "" for all. */
  text: string;
  sort: SortKey;
  ascending: boolean;
  /** Exact participant id: only sessions whose next move is theirs. */
  waitingOn?: string;
  /** Only stuck sessions (SessionListQuery.stuck); the list service turns it into `stuckBefore`. */
  stuck?: boolean;
  /**
   * Only sessions waiting on an answer or an approval since this time (Unix
   * ms) or earlier: `now - threshold` at the time of the read (status.ts stuckFor).
   */
  stuckBefore?: number;
  /** Only closed sessions: resolved, expired or cancelled (the inbox's news). */
  closed?: boolean;
  /** Only sessions with activity at or after this time (Unix ms), through the activity index. */
  activeSince?: number;
}

export const ALL_SESSIONS: CatalogQuery = { participant: "", text: "", sort: "activity", ascending: false };

export function stateRank(state: SessionState): number {
  const i = STATE_KEYS.findIndex((k) => STATE_BY_KEY[k] === state);
  return i < 0 ? 99 : i;
}

export function phaseRank(phase: string): number {
  const i = (PHASE_ORDER as readonly string[]).indexOf(phase);
  return i < 0 ? 99 : i;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

function shown(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
}

const CONTROL = /[\u0000-\u001f\u007f]/;

function filterText(raw: string, field: string): string {
  if (CONTROL.test(raw)) throw invalid(`query.${field} must not contain control characters`);
  const t = raw.trim();
  if ([...t].length > MAX_FILTER_CHARS) throw invalid(`query.${field} is longer than ${MAX_FILTER_CHARS} characters`);
  return t.toLowerCase();
}

/** Validate a browser's SessionListQuery (absent = all sessions, newest activity first). */
export function parseListQuery(q: SessionListQuery | undefined): CatalogQuery {
  if (!q) return { ...ALL_SESSIONS };
  const out: CatalogQuery = { participant: "", text: "", sort: "activity", ascending: q.ascending };
  if (q.mode !== "") {
    const uri = Object.prototype.hasOwnProperty.call(MODE_KEYS, q.mode) ? MODE_KEYS[q.mode] : undefined;
    if (!uri)
      throw invalid(
        `query.mode ${shown(q.mode)} is not one of "", ${Object.keys(MODE_KEYS)
          .map((k) => `"${k}"`)
          .join(", ")}`,
      );
    out.mode = uri;
  }
  if (q.state !== "") {
    if (!(STATE_KEYS as readonly string[]).includes(q.state))
      throw invalid(`query.state ${shown(q.state)} is not one of "", ${STATE_KEYS.map((k) => `"${k}"`).join(", ")}`);
    out.state = STATE_BY_KEY[q.state as StateKey];
  }
  if (q.phase !== "") {
    if (!(PHASE_ORDER as readonly string[]).includes(q.phase))
      throw invalid(`query.phase ${shown(q.phase)} is not a phase (${PHASE_ORDER.join(", ")})`);
    out.phase = q.phase;
  }
  out.participant = filterText(q.participant, "participant");
  out.text = filterText(q.text, "text");
  if (q.waitingOn !== "") {
    const id = q.waitingOn.trim();
    if (CONTROL.test(id) || /\s/.test(id) || [...id].length > 512)
      throw invalid(`query.waiting_on ${shown(q.waitingOn)} is not a participant id`);
    out.waitingOn = id;
  }
  if (q.stuck) out.stuck = true;
  if (q.sort !== "") {
    if (!(SORT_KEYS as readonly string[]).includes(q.sort))
      throw invalid(`query.sort ${shown(q.sort)} is not one of ${SORT_KEYS.join(", ")}`);
    out.sort = q.sort as SortKey;
  }
  return out;
}

/** Validate offset and limit of ListSessionPage (limit 0 = the default page; capped at MAX_PAGE). */
export function parsePage(offset: number, limit: number): { offset: number; limit: number } {
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalid(`offset ${offset} is out of range`);
  if (!Number.isSafeInteger(limit) || limit < 0) throw invalid(`limit ${limit} is out of range`);
  return { offset, limit: limit === 0 ? DEFAULT_PAGE : Math.min(limit, MAX_PAGE) };
}

/** A stable key for a query (watchers with the same query share a count). */
export function queryKey(q: CatalogQuery): string {
  return JSON.stringify([
    q.mode ?? "",
    q.state ?? -1,
    q.phase ?? "",
    q.participant,
    q.text,
    q.sort,
    q.ascending,
    q.waitingOn ?? "",
    q.stuck === true,
    q.stuckBefore ?? 0,
  ]);
}
