// The session list's filters and sort, kept in the URL search params so every
// view is deep-linkable and the back button walks through filter changes.
// Parsing validates everything: unknown values fall back to defaults.
// Filtering, sorting and search run on the server (the console's catalog);
// toSessionListQuery maps the URL's query to the RPC's.

import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { FILE_HANDOFF_MODE, HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { SessionPhase } from "@/lib/macp/projections/session";
import { isPhase, PHASE_INFO, STATE_INFO, STATE_KEYS, stateKeyOf, type StateKey } from "@/lib/views/labels";
import { roleAtLeast, type Role } from "@/lib/authz/roles";

/** `?mode=` values; "file": v0.1 file handoffs of the watched directories (not an MACP mode). */
export const MODE_FILTERS = { handoff: HANDOFF_MODE, task: TASK_MODE, file: FILE_HANDOFF_MODE } as const;
export type ModeFilter = keyof typeof MODE_FILTERS;

export function isModeFilter(v: string | null): v is ModeFilter {
  return v !== null && Object.prototype.hasOwnProperty.call(MODE_FILTERS, v);
}

export const SORT_KEYS = ["activity", "started", "ttl", "intent", "phase", "state", "mode", "owner", "target"] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDir = "asc" | "desc";

export const MAX_TEXT_FILTER = 200;

export interface ListQuery {
  mode?: ModeFilter;
  state?: StateKey;
  phase?: SessionPhase;
  participant: string;
  q: string;
  sort: SortKey;
  dir: SortDir;
  /** A participant id: only sessions whose next move is theirs ("" for all); `?waiting=` in the URL. */
  waiting: string;
  /** Only stuck sessions (an offer unanswered or an approval pending past the threshold); `?stuck=1` in the URL. */
  stuck: boolean;
}

export const DEFAULT_LIST_QUERY: ListQuery = { participant: "", q: "", sort: "activity", dir: "desc", waiting: "", stuck: false };

/** Natural direction when a column is first chosen. */
export function defaultDirFor(sort: SortKey): SortDir {
  return sort === "activity" || sort === "started" ? "desc" : "asc";
}

interface ParamsLike {
  get(name: string): string | null;
}

function cleanText(value: string | null): string {
  if (!value) return "";
  // Drop control characters; cap the length.
  return value
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim()
    .slice(0, MAX_TEXT_FILTER);
}

export function parseListQuery(params: ParamsLike): ListQuery {
  const q: ListQuery = { ...DEFAULT_LIST_QUERY };
  const mode = params.get("mode");
  if (isModeFilter(mode)) q.mode = mode;
  const state = params.get("state");
  if (state && (STATE_KEYS as string[]).includes(state)) q.state = state as StateKey;
  const phase = params.get("phase");
  if (phase && isPhase(phase)) q.phase = phase;
  q.participant = cleanText(params.get("participant"));
  q.q = cleanText(params.get("q"));
  // A participant id has no spaces; anything else is dropped.
  const waiting = cleanText(params.get("waiting"));
  if (!/\s/.test(waiting)) q.waiting = waiting;
  // Only "1" turns it on ("true", "yes" and the like are not the list's vocabulary).
  q.stuck = params.get("stuck") === "1";
  const sort = params.get("sort");
  if (sort && (SORT_KEYS as readonly string[]).includes(sort)) q.sort = sort as SortKey;
  const dir = params.get("dir");
  q.dir = dir === "asc" || dir === "desc" ? dir : defaultDirFor(q.sort);
  return q;
}

/** Search string without defaults, in a stable order ("" when all default). */
export function serializeListQuery(q: ListQuery): string {
  const p = new URLSearchParams();
  if (q.mode) p.set("mode", q.mode);
  if (q.state) p.set("state", q.state);
  if (q.phase) p.set("phase", q.phase);
  if (q.participant) p.set("participant", q.participant);
  if (q.q) p.set("q", q.q);
  if (q.waiting) p.set("waiting", q.waiting);
  if (q.stuck) p.set("stuck", "1");
  if (q.sort !== DEFAULT_LIST_QUERY.sort) p.set("sort", q.sort);
  if (q.dir !== defaultDirFor(q.sort)) p.set("dir", q.dir);
  const s = p.toString();
  return s ? `?${s}` : "";
}

export function hasActiveFilters(q: ListQuery): boolean {
  return Boolean(q.mode || q.state || q.phase || q.participant || q.q || q.waiting || q.stuck);
}

/**
 * Whether the list offers "Waiting on me" to this person: only to people who
 * can be asked to act. A viewer never acts, so no session can ever wait on
 * them; operators, approvers and admins keep it.
 */
export function offersWaitingOnMe(me: { role: Role; participantId: string } | null | undefined): boolean {
  return me !== null && me !== undefined && me.participantId !== "" && roleAtLeast(me.role, "operator");
}

/** The query as the server's catalog takes it (SessionListQuery). */
export interface SessionListQueryFields {
  mode: "" | ModeFilter;
  state: "" | StateKey;
  phase: string;
  participant: string;
  text: string;
  sort: SortKey;
  ascending: boolean;
  waitingOn: string;
  stuck: boolean;
}

export function toSessionListQuery(q: ListQuery): SessionListQueryFields {
  return {
    mode: q.mode ?? "",
    state: q.state ?? "",
    phase: q.phase ?? "",
    participant: q.participant,
    text: q.q,
    sort: q.sort,
    ascending: q.dir === "asc",
    waitingOn: q.waiting,
    stuck: q.stuck,
  };
}

// ---- Reference semantics of the filters and sorts, in memory. The browser
// no longer filters or sorts (the server's catalog does); these stay as the
// oracle the catalog's tests compare their indexed queries with
// (lib/gateway/catalog/sqlite.test.ts).

const lower = (s: string): string => s.toLowerCase();

function participantsOf(s: SessionSummary): string[] {
  const m = s.metadata;
  return [...(m?.participants ?? []), m?.initiator ?? "", s.currentOwner, s.currentTarget].filter((x) => x !== "");
}

/** Whether a row waits on `id`: named, or a v0.1 file offered to anyone by someone else. */
function waitsOn(s: SessionSummary, id: string): boolean {
  if (s.waitingOn.includes(id)) return true;
  return s.waitingOn.includes("*") && s.fileHandoff !== undefined && s.fileHandoff.fromAgent !== id;
}

export function matchesQuery(s: SessionSummary, q: ListQuery): boolean {
  const m = s.metadata;
  if (q.mode && m?.mode !== MODE_FILTERS[q.mode]) return false;
  if (q.state && stateKeyOf(m?.state) !== q.state) return false;
  if (q.phase && s.phase !== q.phase) return false;
  if (q.waiting && !waitsOn(s, q.waiting)) return false;
  if (q.participant) {
    const needle = lower(q.participant);
    if (!participantsOf(s).some((p) => lower(p).includes(needle))) return false;
  }
  if (q.q) {
    const needle = lower(q.q);
    const hay = [s.intent, s.scope, m?.sessionId ?? "", s.currentOwner, s.currentTarget, s.phase, m?.mode ?? "", m?.contextId ?? ""];
    if (!hay.some((h) => lower(h).includes(needle))) return false;
  }
  return true;
}

const PHASE_ORDER = new Map(Object.keys(PHASE_INFO).map((p, i) => [p, i]));
const STATE_ORDER = new Map(STATE_KEYS.map((k, i) => [STATE_INFO[k].state as number, i]));

function sortValue(s: SessionSummary, key: SortKey): number | string {
  const m = s.metadata;
  switch (key) {
    case "activity":
      return Number(s.lastActivityUnixMs);
    case "started":
      return Number(m?.startedAtUnixMs ?? 0n);
    case "ttl":
      return Number(m?.expiresAtUnixMs ?? 0n) || Number.MAX_SAFE_INTEGER;
    case "intent":
      return lower(s.intent);
    case "phase":
      return PHASE_ORDER.get(s.phase) ?? 99;
    case "state":
      return STATE_ORDER.get(m?.state ?? 0) ?? 99;
    case "mode":
      return m?.mode ?? "";
    case "owner":
      return lower(s.currentOwner);
    case "target":
      return lower(s.currentTarget);
  }
}

export function compareSummaries(a: SessionSummary, b: SessionSummary, key: SortKey, dir: SortDir): number {
  const va = sortValue(a, key);
  const vb = sortValue(b, key);
  let c = 0;
  if (typeof va === "number" && typeof vb === "number") c = va - vb;
  else c = String(va).localeCompare(String(vb));
  if (c === 0) {
    // Stable, deterministic tie-break: newest activity first, then id.
    c = Number(b.lastActivityUnixMs - a.lastActivityUnixMs);
    if (c === 0) c = (a.metadata?.sessionId ?? "").localeCompare(b.metadata?.sessionId ?? "");
    return c;
  }
  return dir === "asc" ? c : -c;
}

/** Filter and sort the rows for display. */
export function applyListQuery(rows: Iterable<SessionSummary>, q: ListQuery): SessionSummary[] {
  const out: SessionSummary[] = [];
  for (const r of rows) if (matchesQuery(r, q)) out.push(r);
  out.sort((a, b) => compareSummaries(a, b, q.sort, q.dir));
  return out;
}
