// Every session as of now, for ListSessions and WatchSessions: resident ones
// from memory, closed ones from the store's session index, read a page at a
// time as the caller iterates.
import { toBinary } from "@bufbuild/protobuf";
import { SessionMetadataSchema, type SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { SessionIndexEntry, Store } from "../store/types";
import { isResidentStatus } from "../store/types";

/** Index rows per page when sessions are listed or rebuilt from storage. */
export const INDEX_PAGE_ROWS = 256;

export type SnapshotItem = { metadata: SessionMetadata } | { entry: SessionIndexEntry };

/**
 * Every session as of now, in the order they started: resident ones as
 * metadata, closed ones as their index rows. Taken now: the resident
 * sessions' metadata (`resident`, in any order) and the store's last
 * position. Read later, as iterated: the closed sessions, from the session
 * index up to that position. A closed session never changes, and a session
 * that closes while the snapshot is read appears as it was when it was taken
 * (its change arrives as a lifecycle event), so the snapshot plus the events
 * after it are exact. Sessions started later than now are not in it.
 */
export function snapshotItems(store: Store, residentNow: Iterable<SessionMetadata>): Generator<SnapshotItem, void, undefined> {
  const maxPosition = store.lastPosition();
  const resident = new Map<string, SessionMetadata>();
  for (const m of residentNow) resident.set(m.sessionId, m);
  function* items(): Generator<SnapshotItem, void, undefined> {
    for (let after = 0; ;) {
      const page = store.listSessions({ afterPosition: after, maxPosition, limit: INDEX_PAGE_ROWS });
      if (page.length === 0) break;
      for (const entry of page) {
        const live = resident.get(entry.sessionId);
        if (live) {
          resident.delete(entry.sessionId);
          yield { metadata: live };
        } else if (entry.metadata !== null && !isResidentStatus(entry.status)) {
          yield { entry };
        }
        // An open row not resident when the snapshot was taken cannot
        // happen after open() (every open row is rebuilt); it is skipped
        // rather than shown with a summary that may be behind.
      }
      after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
    }
    // Admitted before the snapshot, not yet durable then: the newest.
    for (const metadata of resident.values()) yield { metadata };
  }
  return items();
}

/** Tag and length of a length-delimited protobuf field. */
function lengthDelimitedHead(field: number, length: number): Uint8Array {
  const bytes = [(field << 3) | 2];
  for (let v = length; ;) {
    if (v < 0x80) {
      bytes.push(v);
      break;
    }
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  return Uint8Array.from(bytes);
}

/**
 * The snapshot as a binary macp.v1.ListSessionsResponse (field 1, repeated
 * SessionMetadata), assembled from the stored summaries without decoding
 * them: its cost is the size of the response, not the size of the sessions
 * as objects.
 */
export function encodeListSessions(items: Iterable<SnapshotItem>): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  for (const item of items) {
    const body = "metadata" in item ? toBinary(SessionMetadataSchema, item.metadata) : (item.entry.metadata as Uint8Array);
    const head = lengthDelimitedHead(1, body.length);
    parts.push(head, body);
    size += head.length + body.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
