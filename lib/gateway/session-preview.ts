// The first view of a session page, rendered on the server: the same
// SubscribeSession stream a browser gets (sessionStream), folded with the same
// pure applySubscribeBatch, stopped at caught_up. The page's HTML then carries
// the header, summaries and latest events before any of the live JavaScript
// has loaded; the browser's own stream takes over after the `load` event.
//
// Bounded so a page never waits long for it: sessions with more than
// `maxEvents` events get no preview (the live view loads at once instead;
// 0 turns previews off), and the page stops waiting after `timeoutMs`.
// SessionPreviews (what the console uses) keeps the folded state of recently
// viewed sessions, so a page request reads and folds only the events since
// the last view instead of the whole history.
import { ConnectError, Code } from "@connectrpc/connect";
import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { applySubscribeBatch, beginConnection, initialSessionStreamState, type SessionStreamState } from "@/lib/views/session-stream-state";
import { historyCount } from "@/lib/macp/projections/summary";
import { sessionStream, type SessionStreamDeps } from "./session-stream";

/** Default bound on the payload bytes one fold reads. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export interface SessionPreviewOptions {
  /** Skip sessions with more events than this. Default 2,000. */
  maxEvents?: number;
  /** Skip sessions whose payloads add up to more than this (read so far). Default 64 MiB. */
  maxBytes?: number;
  /** Give up after this long. Default 400 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type SessionPreview =
  | { kind: "ready"; state: SessionStreamState }
  | { kind: "skipped"; reason: "disabled" | "too-large" | "timeout" | "unavailable"; detail?: string }
  | { kind: "not-found" };

const FOLD_EVERY = 256;

/** Rough bytes a folded event holds: its payload plus the envelope's other fields. */
const eventBytes = (e: SessionStreamState["events"][number]): number => (e.envelope.payload?.byteLength ?? 0) + 256;

type FoldResult =
  | { kind: "ready"; state: SessionStreamState }
  | { kind: "skipped"; reason: "too-large" | "unavailable"; detail?: string }
  | { kind: "not-found" }
  /** Stopped early; `partial` is a valid fold of the events read so far (a place to resume). */
  | { kind: "aborted"; partial: SessionStreamState };

/**
 * Resume `start` (a folded state, or the initial one) from its lastSequence:
 * only events after it are read and folded, up to caught_up.
 */
async function foldFrom(
  deps: SessionStreamDeps,
  start: SessionStreamState,
  limits: { maxEvents: number; maxBytes: number },
  signal: AbortSignal,
): Promise<FoldResult> {
  const { maxEvents, maxBytes } = limits;
  let state = beginConnection(start);
  let batch: SubscribeSessionResponse[] = [];
  let bytes = 0;
  const fold = (): void => {
    if (batch.length > 0) state = applySubscribeBatch(state, batch).state;
    batch = [];
  };
  try {
    for await (const msg of sessionStream(deps, start.sessionId, start.lastSequence, signal)) {
      if (
        msg.item.case === "metadata" &&
        batch.length === 0 &&
        state.lastSequence === start.lastSequence &&
        historyCount(msg.item.value) > maxEvents
      ) {
        return { kind: "skipped", reason: "too-large", detail: `${historyCount(msg.item.value)} events` };
      }
      batch.push(msg);
      if (msg.item.case === "caughtUp") {
        fold();
        return { kind: "ready", state };
      }
      if (msg.item.case === "event") {
        // Memory follows the bytes read, whatever the event count (payloads may be up to 1 MB each).
        bytes += (msg.item.value.envelope?.payload.byteLength ?? 0) + 256;
        if (bytes > maxBytes)
          return {
            kind: "skipped",
            reason: "too-large",
            detail: `more than ${maxBytes >= 1 << 20 ? `${Math.round(maxBytes / (1 << 20))} MiB` : `${Math.round(maxBytes / 1024)} KiB`} of payloads`,
          };
      }
      if (batch.length >= FOLD_EVERY) fold();
    }
    if (signal.aborted) {
      fold();
      return { kind: "aborted", partial: state };
    }
    // The stream ended before caught_up (only when the session vanished mid-read).
    return { kind: "skipped", reason: "unavailable", detail: "the stream ended before the history was complete" };
  } catch (e) {
    if (signal.aborted) {
      fold();
      return { kind: "aborted", partial: state };
    }
    if (e instanceof ConnectError && e.code === Code.NotFound) return { kind: "not-found" };
    if (e instanceof ConnectError && e.code === Code.OutOfRange && start.lastSequence > 0) {
      // The runtime holds fewer events than this fold (a memory-only runtime
      // started again): fold from the start.
      return foldFrom(deps, initialSessionStreamState(start.sessionId), limits, signal);
    }
    return { kind: "skipped", reason: "unavailable", detail: e instanceof Error ? e.message : String(e) };
  }
}

export async function loadSessionPreview(
  deps: SessionStreamDeps,
  sessionId: string,
  options: SessionPreviewOptions = {},
): Promise<SessionPreview> {
  const maxEvents = options.maxEvents ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 400;
  if (maxEvents <= 0) return { kind: "skipped", reason: "disabled" };
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error("timeout")), timeoutMs);
  const onOuterAbort = (): void => ac.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  try {
    const r = await foldFrom(
      deps,
      initialSessionStreamState(sessionId),
      { maxEvents, maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES },
      ac.signal,
    );
    return r.kind === "aborted" ? { kind: "skipped", reason: "timeout" } : r;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onOuterAbort);
    ac.abort();
  }
}

export interface SessionPreviewsOptions extends Omit<SessionPreviewOptions, "signal" | "maxBytes"> {
  /**
   * Bytes of folded sessions kept between page loads (least recently used go
   * first); also the most one session's fold may read. Default 64 MiB.
   */
  cacheBytes?: number;
  /** A fold that outlives its page request goes on in the background for at most this long. Default 15 s. */
  foldTimeoutMs?: number;
  /** Ends every fold (the console is shutting down). */
  signal?: AbortSignal;
}

/**
 * First views without folding the whole history on every request: the folded
 * state of recently viewed sessions is kept (bounded by bytes), and a page
 * request resumes it from its last sequence, so it reads and folds only the
 * events that happened since. The first view of a session folds its history
 * once; when that takes longer than the page's time budget the page renders
 * without a first view and the fold finishes in the background (one per
 * session at a time), so the next view of it is quick.
 */
export class SessionPreviews {
  private readonly cache = new Map<string, { state: SessionStreamState; bytes: number }>();
  private readonly inflight = new Map<string, Promise<FoldResult>>();
  private bytes = 0;
  readonly maxEvents: number;
  private readonly timeoutMs: number;
  private readonly cacheBytes: number;
  private readonly foldTimeoutMs: number;

  constructor(
    private readonly deps: SessionStreamDeps,
    private readonly options: SessionPreviewsOptions = {},
  ) {
    this.maxEvents = options.maxEvents ?? 2_000;
    this.timeoutMs = options.timeoutMs ?? 400;
    this.cacheBytes = options.cacheBytes ?? DEFAULT_MAX_BYTES;
    this.foldTimeoutMs = options.foldTimeoutMs ?? 15_000;
  }

  /** Sessions and bytes held (for tests and stats). */
  get held(): { sessions: number; bytes: number } {
    return { sessions: this.cache.size, bytes: this.bytes };
  }

  async load(sessionId: string): Promise<SessionPreview> {
    if (this.maxEvents <= 0) return { kind: "skipped", reason: "disabled" };
    if (this.options.signal?.aborted) return { kind: "skipped", reason: "unavailable", detail: "the console is shutting down" };
    let fold = this.inflight.get(sessionId);
    if (!fold) {
      fold = this.foldAndKeep(sessionId);
      this.inflight.set(sessionId, fold);
      const done = fold;
      void done.finally(() => {
        if (this.inflight.get(sessionId) === done) this.inflight.delete(sessionId);
      });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    try {
      const r = await Promise.race([fold, timeout]);
      if (r === "timeout" || r.kind === "aborted") return { kind: "skipped", reason: "timeout" };
      return r;
    } finally {
      clearTimeout(timer);
    }
  }

  private async foldAndKeep(sessionId: string): Promise<FoldResult> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Error("fold timeout")), this.foldTimeoutMs);
    const outer = this.options.signal;
    const onOuterAbort = (): void => ac.abort(outer?.reason);
    outer?.addEventListener("abort", onOuterAbort, { once: true });
    try {
      const kept = this.cache.get(sessionId);
      const r = await foldFrom(
        this.deps,
        kept?.state ?? initialSessionStreamState(sessionId),
        // A resumed fold reads only new events: its bytes count on top of what is kept.
        { maxEvents: this.maxEvents, maxBytes: this.cacheBytes - (kept?.bytes ?? 0) },
        ac.signal,
      );
      // A fold cut short by its time bound is kept too (not caught up): the
      // next one resumes where it stopped, so a long history is read once in all.
      const folded = r.kind === "ready" ? r.state : r.kind === "aborted" && !outer?.aborted ? r.partial : null;
      if (folded && folded.lastSequence > 0) {
        // Resumed: only the new events add bytes (unless it had to start over).
        const n = kept?.state.events.length ?? 0;
        const resumed = kept !== undefined && n > 0 && folded.events[n - 1] === kept.state.events[n - 1];
        this.keep(sessionId, folded, resumed ? kept.bytes + folded.events.slice(n).reduce((b, e) => b + eventBytes(e), 0) : undefined);
      } else if (r.kind === "not-found" || (r.kind === "skipped" && r.reason === "too-large")) this.drop(sessionId);
      return r;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuterAbort);
      ac.abort();
    }
  }

  private keep(sessionId: string, state: SessionStreamState, knownBytes?: number): void {
    this.drop(sessionId);
    const bytes = knownBytes ?? state.events.reduce((n, e) => n + eventBytes(e), 0);
    if (bytes > this.cacheBytes) return;
    // Most recently used last; evict from the front.
    for (const [id, entry] of this.cache) {
      if (this.bytes + bytes <= this.cacheBytes) break;
      this.cache.delete(id);
      this.bytes -= entry.bytes;
    }
    this.cache.set(sessionId, { state, bytes });
    this.bytes += bytes;
  }

  private drop(sessionId: string): void {
    const entry = this.cache.get(sessionId);
    if (!entry) return;
    this.cache.delete(sessionId);
    this.bytes -= entry.bytes;
  }
}
