// List rows of sessions stored before the store had them (schema v2): the
// background backfill that folds them a page of sessions at a time. Rows of
// sessions the kernel writes are made with each write (residentListRow).
import { fromBinary } from "@bufbuild/protobuf";
import { leanEnvelope, nextActors, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import { EnvelopeSchema } from "@/lib/gen/macp/v1/envelope_pb";
import { encodeListSummary } from "../list-row-codec";
import type { ListRow, SessionIndexEntry, Store, StoredRecord } from "../store/types";
import { isResidentStatus } from "../store/types";
import type { Logger } from "./fanout";
import { decodeMetadata, isTerminal } from "./session";

/**
 * Records and bytes per page when history is read from storage (a page always
 * holds at least one envelope, so with 1 MB envelopes a page is one of them).
 */
export const HISTORY_PAGE_RECORDS = 128;
export const HISTORY_PAGE_BYTES = 256 * 1024;
/** Sessions per page (and per commit) of the list-row backfill. */
const BACKFILL_PAGE_SESSIONS = 64;
/** The list-row backfill logs its progress this often. */
const BACKFILL_PROGRESS_MS = 5_000;

const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** A closed session's list row, folded from its stored envelopes (a page at a time, yielding in between). */
async function storedListRow(store: Store, entry: SessionIndexEntry, stopped: () => boolean): Promise<ListRow> {
  const meta = decodeMetadata(entry);
  const fold = new SessionFold(entry.sessionId, meta.mode);
  for (let after = 0; ;) {
    const page = store.readSession(entry.sessionId, after, { maxRecords: HISTORY_PAGE_RECORDS, maxBytes: HISTORY_PAGE_BYTES });
    if (page.length === 0) break;
    for (const r of page) fold.add(leanEnvelope(fromBinary(EnvelopeSchema, r.envelope)));
    after = (page[page.length - 1] as StoredRecord).seq;
    await nextTurn();
    if (stopped()) break;
  }
  const view = fold.view;
  const summary = toSummary(meta, view, fold.count, entry.activityMs);
  return {
    sessionId: entry.sessionId,
    summary: encodeListSummary(summary),
    nextActors: nextActors(meta, view),
    final: isTerminal(meta.state),
  };
}

export interface BackfillDeps {
  store: Store;
  log: Logger;
  /** The row of a resident session, from memory; undefined if it is not resident. */
  residentRow(sessionId: string): ListRow | undefined;
  /** True once the kernel is closing: the backfill stops and resumes at the next start. */
  stopped(): boolean;
}

/**
 * A store migrated from schema v2 has sessions without list rows: fold
 * them a page of sessions at a time (resident ones from memory, closed
 * ones from their envelopes), each page one commit, yielding to the event
 * loop in between, so the runtime serves meanwhile. A session the kernel
 * writes in the meantime keeps the kernel's row. Interrupted, it resumes
 * at the next start.
 */
export async function backfillListRows({ store, log, residentRow, stopped }: BackfillDeps): Promise<void> {
  const t0 = performance.now();
  let lastLog = t0;
  let done = 0;
  log.info({}, "list rows: folding the rows of sessions stored before schema v3, in the background");
  for (let after = 0; ;) {
    if (stopped()) return;
    const page = store.sessionsWithoutListRow(after, BACKFILL_PAGE_SESSIONS);
    if (page.length === 0) break;
    const rows: ListRow[] = [];
    for (const entry of page) {
      const resident = residentRow(entry.sessionId);
      if (resident) rows.push(resident);
      else if (entry.metadata !== null && !isResidentStatus(entry.status)) rows.push(await storedListRow(store, entry, stopped));
      if (stopped()) return;
    }
    after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
    await store.backfillListRows(rows);
    done += rows.length;
    if (performance.now() - lastLog >= BACKFILL_PROGRESS_MS) {
      lastLog = performance.now();
      log.info({ rows: done, ms: Math.round(lastLog - t0) }, `list rows: ${done} sessions folded so far`);
    }
  }
  if (stopped()) return;
  await store.backfillListRows([], true);
  log.info({ rows: done, ms: Math.round(performance.now() - t0) }, `list rows: backfill done (${done} sessions folded)`);
}
