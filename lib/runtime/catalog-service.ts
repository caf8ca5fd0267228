// baton.v1.RuntimeCatalogService: the list-row feed. The kernel writes each
// session's list row with every record (kernel/kernel.ts and kernel/session.ts, residentListRow); this streams
// them to a console in change order: first what is stored after the caller's
// cursor, read a page at a time and only as the transport takes the previous
// response (backpressure), then live rows as their commits become durable.
//
// No gap, no duplicate: the live listener is registered before the head is
// read, live rows queue in an AsyncQueue (lib/base) bounded by count and bytes meanwhile,
// and a row is sent only if its change is above the last one sent. A session
// whose row moved past the head during catch-up arrives from the live queue.
// A watcher that falls further behind than the buffer is ended with
// RESOURCE_EXHAUSTED naming the change to resume after; the stored rows hold
// every session's newest row, so a resume loses nothing.
import { create, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  ListRowChangeSchema,
  WatchListRowsResponseSchema,
  type RuntimeCatalogService,
  type ListRowChange,
  type WatchListRowsResponse,
} from "@/lib/gen/baton/v1/runtime_catalog_pb";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import type { AuthResolver } from "./auth";
import { AsyncQueue, QueueOverflowError } from "@/lib/base/async-queue";
import type { RuntimeConfig } from "./config";
import type { Kernel, Logger } from "./kernel";
import { closeOnAbort, once, requireIdentity } from "./rpc-common";
import type { StoredListRow } from "./store/types";
import { StoreCorruptionError } from "./store/types";
import type { Subscriptions } from "./subscriptions";

/** Rows per response when the caller asks for 0. */
export const DEFAULT_MAX_ROWS = 256;
/** Most rows per response, whatever the caller asks. */
export const MAX_ROWS_CAP = 1_000;

export interface CatalogServiceDeps {
  kernel: Kernel;
  auth: AuthResolver;
  config: Pick<RuntimeConfig, "subscriberBuffer" | "subscriberBufferBytes">;
  logger: Logger;
  subscriptions: Subscriptions;
}

/** Approximate bytes a committed batch of rows holds while queued for a watcher. */
function batchBytes(rows: readonly StoredListRow[]): number {
  let n = 64;
  for (const r of rows) {
    n += 128 + r.summary.length + 2 * r.sessionId.length;
    for (const a of r.nextActors) n += 48 + 2 * a.length;
  }
  return n;
}

/** Live rows are the same objects for every watcher: each is decoded once. */
const decodedLive = new WeakMap<StoredListRow, ListRowChange>();

function toChange(r: StoredListRow): ListRowChange {
  const hit = decodedLive.get(r);
  if (hit) return hit;
  const change = decodeRow(r);
  decodedLive.set(r, change);
  return change;
}

function decodeRow(r: StoredListRow): ListRowChange {
  let summary;
  try {
    summary = fromBinary(SessionSummarySchema, r.summary);
  } catch (e) {
    throw new StoreCorruptionError(`list row of ${r.sessionId} (change ${r.change}) cannot be decoded: ${(e as Error).message}`);
  }
  return create(ListRowChangeSchema, { change: BigInt(r.change), summary, nextActors: [...r.nextActors], final: r.final });
}

export function runtimeCatalogServiceImpl(deps: CatalogServiceDeps): Partial<ServiceImpl<typeof RuntimeCatalogService>> {
  const { kernel, auth, config, subscriptions } = deps;
  return {
    async *watchListRows(req, ctx) {
      const identity = requireIdentity(auth, ctx);
      if (!identity.isObserver) {
        throw new ConnectError(
          `PERMISSION_DENIED: ${identity.sender} is not an observer; the list-row feed describes every session, so only an observer identity (is_observer on its token, or MACP_DEV_OBSERVERS in dev mode) may watch it`,
          Code.PermissionDenied,
        );
      }
      if (req.afterChange > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new ConnectError(`after_change ${req.afterChange} is out of range`, Code.InvalidArgument);
      }
      const maxRows = req.maxRows === 0 ? DEFAULT_MAX_ROWS : Math.min(req.maxRows, MAX_ROWS_CAP);
      const storeId = kernel.storeId;
      const ch = new AsyncQueue<readonly StoredListRow[]>({
        capacity: config.subscriberBuffer,
        maxBytes: config.subscriberBufferBytes,
        sizeOf: batchBytes,
      });
      const slot = subscriptions.acquire(identity, ch);
      // Listen first, then read the head: every change above it arrives live.
      const stop = kernel.watchListRows((rows) => ch.push(rows));
      const release = once(() => {
        stop();
        slot();
      });
      closeOnAbort(ctx, ch as AsyncQueue<unknown>, release);
      const head = kernel.lastListChange();
      let after = Number(req.afterChange);
      // A cursor of another store (or from beyond this store's head, e.g. a
      // store restored from an older copy) describes rows this store may not
      // have: start over, and say so.
      const foreign = req.storeId !== storeId && (req.storeId !== "" || after > 0);
      const restarted = foreign || after > head;
      if (restarted) after = 0;
      let last = after;
      let first = true;
      const response = (rows: ListRowChange[], caughtUp: boolean): WatchListRowsResponse => {
        const r = create(WatchListRowsResponseSchema, {
          storeId,
          restarted: first && restarted,
          rows,
          head: BigInt(Math.max(kernel.lastListChange(), last)),
          caughtUp,
        });
        first = false;
        return r;
      };
      try {
        // Catch-up: the stored rows after the cursor, one page per response.
        let caughtUp = false;
        while (!caughtUp) {
          if (ctx.signal.aborted) return;
          if (ch.isClosed) break; // overflowed meanwhile: reported below, with the cursor to resume from
          const page = last < head ? kernel.readListRows(last, maxRows) : [];
          if (page.length > 0) last = (page[page.length - 1] as StoredListRow).change;
          caughtUp = page.length === 0 || last >= head;
          yield response(page.map(toChange), caughtUp);
        }
        // Live: durable rows as they commit, skipping what catch-up already sent.
        for await (const batch of ch) {
          const fresh = batch.filter((r) => r.change > last);
          for (let i = 0; i < fresh.length; i += maxRows) {
            const chunk = fresh.slice(i, i + maxRows);
            last = (chunk[chunk.length - 1] as StoredListRow).change;
            yield response(chunk.map(toChange), false);
          }
        }
      } catch (e) {
        if (e instanceof QueueOverflowError) {
          throw new ConnectError(
            `RESOURCE_EXHAUSTED: this list-row watcher fell too far behind live changes and was ended; resume with after_change=${last} and store_id=${storeId}`,
            Code.ResourceExhausted,
          );
        }
        throw e;
      } finally {
        release();
      }
    },
  };
}
