// The inbox's live views of the open sessions, for the row feed
// (feeder-rows.ts): a list row does not carry the folded view the inbox needs
// (offers, tasks, who answers), so the OPEN and SUSPENDED sessions, and only
// those, are followed through passive subscribes. Nothing here writes the
// catalog: its rows come from the feed alone.
import { Code } from "@connectrpc/connect";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import { historyCount, leanEnvelope, SessionFold } from "@/lib/macp/projections/summary";
import { Limiter } from "@/lib/base/async-queue";
import { backoffMs, linkedController } from "@/lib/base/abort";
import { isAbortError, upstreamError } from "../errors";
import { fresherMetadata } from "../sequencer";
import { OPEN_STATES, type FeedHost } from "./feed";

/** An open session followed for the inbox. */
interface OpenEntry {
  id: string;
  meta: SessionMetadata;
  fold: SessionFold | null;
  ac: AbortController | null;
  caughtUp: boolean;
  reading: boolean;
  failures: number;
  retry: NodeJS.Timeout | null;
}

/**
 * The folded views of the open sessions, for the inbox: one passive
 * subscribe per OPEN or SUSPENDED session (catch-up bounded by `concurrency`,
 * no slot held once caught up), dropped when the feed says the session
 * closed. Bounded by what is open; writes nothing to the catalog.
 */
export class OpenFollower {
  private readonly entries = new Map<string, OpenEntry>();
  private readonly limiter: Limiter;
  private caughtUpFeed = false;
  loadedSent = false;
  /** Passive subscribes started. */
  reads = 0;

  constructor(
    private readonly host: FeedHost,
    private readonly signal: AbortSignal,
    concurrency: number,
    private readonly stallMs: number,
  ) {
    this.limiter = new Limiter(concurrency);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The open sessions the catalog holds (a restart resumes after them). */
  seed(store: FeedHost["store"]): void {
    for (const state of [SessionState.OPEN, SessionState.SUSPENDED]) {
      for (let offset = 0; ; offset += 500) {
        const page = store.page({ state, participant: "", text: "", sort: "started", ascending: true }, offset, 500);
        for (const s of page.rows) if (s.metadata) this.row(s.metadata, false);
        if (page.rows.length < 500) break;
      }
    }
  }

  *views(): Iterable<{ meta: SessionMetadata; view: SessionView }> {
    for (const e of this.entries.values()) if (e.caughtUp && e.fold) yield { meta: e.meta, view: e.fold.view };
  }

  row(meta: SessionMetadata, final: boolean): void {
    if (this.signal.aborted) return;
    const e = this.entries.get(meta.sessionId);
    if (final || !OPEN_STATES.has(meta.state)) {
      if (e) this.drop(e);
      return;
    }
    if (e) {
      const before = e.meta;
      e.meta = fresherMetadata(e.meta, meta);
      if (e.meta !== before && e.caughtUp && e.fold) this.host.openUpdate(e.meta, e.fold.view);
      return;
    }
    const entry: OpenEntry = { id: meta.sessionId, meta, fold: null, ac: null, caughtUp: false, reading: false, failures: 0, retry: null };
    this.entries.set(entry.id, entry);
    void this.follow(entry);
  }

  /** The feed sent every stored row: once the open sessions are caught up, the inbox is loaded. */
  feedCaughtUp(): void {
    this.caughtUpFeed = true;
    this.checkLoaded();
  }

  /** The runtime's store was replaced: forget every open session (the feed sends the new ones). */
  reset(): void {
    for (const e of [...this.entries.values()]) this.drop(e);
  }

  private drop(e: OpenEntry): void {
    if (this.entries.get(e.id) !== e) return;
    this.entries.delete(e.id);
    if (e.retry) clearTimeout(e.retry);
    e.retry = null;
    e.ac?.abort();
    this.host.openClosed(e.id);
    this.checkLoaded();
  }

  private checkLoaded(): void {
    if (this.loadedSent || !this.caughtUpFeed) return;
    for (const e of this.entries.values()) if (e.reading && !e.caughtUp) return;
    this.loadedSent = true;
    this.host.openLoaded();
  }

  private async follow(e: OpenEntry): Promise<void> {
    let release: (() => void) | null;
    try {
      release = await this.limiter.acquire(this.signal);
    } catch {
      return;
    }
    const free = () => {
      release?.();
      release = null;
    };
    if (this.entries.get(e.id) !== e || this.signal.aborted) {
      free();
      return;
    }
    const ac = linkedController(this.signal);
    const fold = new SessionFold(e.id, e.meta.mode);
    e.ac = ac;
    e.fold = fold;
    e.caughtUp = false;
    e.reading = true;
    this.reads++;
    let stall: NodeJS.Timeout | null = null;
    let stalled = false;
    const arm = () => {
      if (stall) clearTimeout(stall);
      stall = setTimeout(() => {
        stalled = true;
        ac.abort();
      }, this.stallMs);
    };
    let retry = false;
    try {
      arm();
      for await (const env of this.host.runtime.subscribeSession(e.id, 0, ac.signal)) {
        const changed = fold.add(leanEnvelope(env));
        if (!e.caughtUp) {
          arm();
          if (fold.count >= historyCount(e.meta)) {
            e.caughtUp = true;
            e.failures = 0;
            if (stall) clearTimeout(stall);
            stall = null;
            free();
            this.host.openUpdate(e.meta, fold.view);
            this.checkLoaded();
          }
        } else if (changed) this.host.openUpdate(e.meta, fold.view);
      }
      retry = !ac.signal.aborted;
    } catch (err) {
      if (this.signal.aborted) return;
      if (stalled) {
        this.host.log.warn(
          { sessionId: e.id, folded: fold.count, expected: historyCount(e.meta) },
          "open session read stalled; retrying later",
        );
        retry = true;
      } else if (!ac.signal.aborted && !isAbortError(err)) {
        const ce = upstreamError(err, `session ${e.id}`);
        if (ce.code === Code.NotFound || ce.code === Code.PermissionDenied) {
          // Gone, or not readable by the console's identity: the inbox cannot show it.
          this.host.log.warn({ sessionId: e.id, code: Code[ce.code] }, "open session cannot be read; left out of the inbox");
          this.drop(e);
          return;
        }
        this.host.log.warn({ sessionId: e.id, err }, "open session read failed; retrying later");
        retry = true;
      }
    } finally {
      if (stall) clearTimeout(stall);
      free();
      e.reading = false;
      ac.abort();
      if (e.ac === ac) e.ac = null;
      if (retry && this.entries.get(e.id) === e && !this.signal.aborted) this.retryLater(e);
      this.checkLoaded();
    }
  }

  private retryLater(e: OpenEntry): void {
    // Observers drop what they knew until it is caught up again.
    if (e.caughtUp) this.host.openClosed(e.id);
    e.caughtUp = false;
    e.failures++;
    e.retry = setTimeout(
      () => {
        e.retry = null;
        if (this.entries.get(e.id) === e) void this.follow(e);
      },
      backoffMs(e.failures - 1, 500, 60_000),
    );
  }

  close(): void {
    for (const e of this.entries.values()) {
      if (e.retry) clearTimeout(e.retry);
      e.ac?.abort();
    }
    this.entries.clear();
  }
}
