// A catalog query as SQL over the sessions table: the WHERE clause with its
// parameters, and the ORDER BY of a sort (each sort has its own index, ties
// broken by newest activity then id, as lib/views/list-query.ts
// compareSummaries does). Each carries a key naming its shape, so the catalog
// prepares one statement per shape, not per query.
//
// Text and participant filters go through the FTS5 trigram index (substring
// matches); a needle shorter than a trigram scans with instr(). Browser text
// is only ever bound as a quoted FTS phrase or an instr() argument, never
// parsed as FTS or SQL syntax.
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { CatalogQuery, SortKey } from "./query";

/** States after which nothing more happens in a session (numbers: bound into the SQL text, never from the browser). */
const CLOSED_STATES = [SessionState.RESOLVED, SessionState.EXPIRED, SessionState.CANCELLED];

/** Text filters shorter than this (in characters) cannot use the trigram index: they scan. */
const TRIGRAM = 3;

const SORT_COLUMN: Readonly<Record<SortKey, string>> = {
  activity: "activity_ms",
  started: "started_ms",
  ttl: "ttl_key",
  intent: "intent_lc",
  phase: "phase_rank",
  state: "state_rank",
  mode: "mode",
  owner: "owner_lc",
  target: "target_lc",
};

/** A WHERE clause (empty when nothing filters), its parameters, and its shape's key. */
export interface Where {
  sql: string;
  params: (string | number)[];
  key: string;
}

/** A quoted FTS5 phrase: the needle matched as a substring, never as query syntax. */
function phrase(needle: string): string {
  return `"${needle.replace(/"/g, '""')}"`;
}

/** WHERE clause and parameters for a query. */
export function whereOf(q: CatalogQuery): Where {
  const parts: string[] = [];
  const params: (string | number)[] = [];
  const key: string[] = [];
  if (q.mode !== undefined) {
    parts.push("mode = ?");
    params.push(q.mode);
    key.push("m");
  }
  if (q.state !== undefined) {
    parts.push("state = ?");
    params.push(q.state);
    key.push("s");
  }
  if (q.phase !== undefined) {
    parts.push("phase = ?");
    params.push(q.phase);
    key.push("p");
  }
  if (q.stuckBefore !== undefined) {
    // Through sessions_stuck: only rows waiting on an answer or an approval, started at or before the cut.
    parts.push("stuck_since_ms > 0 AND stuck_since_ms <= ?");
    params.push(q.stuckBefore);
    key.push("k");
  }
  if (q.closed === true) {
    parts.push(`state IN (${CLOSED_STATES.join(", ")})`);
    key.push("c");
  }
  if (q.activeSince !== undefined) {
    parts.push("activity_ms >= ?");
    params.push(q.activeSince);
    key.push("a");
  }
  if (q.waitingOn !== undefined) {
    // Only sessions someone must act in (open ones: a few) are looked at, through sessions_waiting.
    // A file row offered to anyone ("*") waits on everyone but its offerer ("!<from_agent>").
    parts.push(
      "next_actors <> '' AND (instr(char(10) || next_actors || char(10), char(10) || ? || char(10)) > 0" +
        " OR (instr(char(10) || next_actors || char(10), char(10) || '*' || char(10)) > 0 AND instr(char(10) || next_actors || char(10), char(10) || '!' || ? || char(10)) = 0))",
    );
    params.push(q.waitingOn, q.waitingOn);
    key.push("w");
  }
  // Column filters of one MATCH expression, each a quoted phrase built here.
  const fts: string[] = [];
  if (q.participant !== "") {
    if ([...q.participant].length >= TRIGRAM) {
      fts.push(`parts : ${phrase(q.participant)}`);
      key.push("P");
    } else {
      parts.push("instr(participants_lc, ?) > 0");
      params.push(q.participant);
      key.push("p2");
    }
  }
  if (q.text !== "") {
    if ([...q.text].length >= TRIGRAM) {
      fts.push(`hay : ${phrase(q.text)}`);
      key.push("T");
    } else {
      parts.push("instr(hay, ?) > 0");
      params.push(q.text);
      key.push("t2");
    }
  }
  if (fts.length > 0) {
    parts.push("n IN (SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH ?)");
    params.push(fts.join(" AND "));
  }
  return { sql: parts.length > 0 ? `WHERE ${parts.join(" AND ")}` : "", params, key: key.join(",") };
}

/** ORDER BY terms of a query's sort, and its shape's key. */
export function orderOf(q: CatalogQuery): { sql: string; key: string } {
  const col = SORT_COLUMN[q.sort];
  const dir = q.ascending ? "ASC" : "DESC";
  const sql = q.sort === "activity" ? `activity_ms ${dir}, session_id ASC` : `${col} ${dir}, activity_ms DESC, session_id ASC`;
  return { sql, key: `${q.sort}|${dir}` };
}
