// The first view of a session page, rendered on the server: the same
// SubscribeSession stream a browser gets (sessionStream), folded with the same
// pure applySubscribeBatch, stopped at caught_up. The page's HTML then carries
// the header, summaries and latest events before any of the live JavaScript
// has loaded; the browser's own stream takes over after the `load` event.
//
// Bounded so a page never waits long for it: sessions with more than
// `maxEvents` events get no preview (the live view loads at once instead;
// 0 turns previews off), and the whole read gives up after `timeoutMs`.
import { ConnectError, Code } from "@connectrpc/connect";
import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import {
  applySubscribeBatch,
  beginConnection,
  initialSessionStreamState,
  type SessionStreamState,
} from "@/lib/client/session-stream-state";
import { historyCount } from "./sequencer";
import { sessionStream, type SessionStreamDeps } from "./session-stream";

export interface SessionPreviewOptions {
  /** Skip sessions with more events than this. Default 2,000. */
  maxEvents?: number;
  /** Give up after this long. Default 400 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type SessionPreview =
  | { kind: "ready"; state: SessionStreamState }
  | { kind: "skipped"; reason: "disabled" | "too-large" | "timeout" | "unavailable"; detail?: string }
  | { kind: "not-found" };

const FOLD_EVERY = 256;

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
  let state = beginConnection(initialSessionStreamState(sessionId));
  let batch: SubscribeSessionResponse[] = [];
  const fold = (): void => {
    if (batch.length > 0) state = applySubscribeBatch(state, batch).state;
    batch = [];
  };
  try {
    for await (const msg of sessionStream(deps, sessionId, 0, ac.signal)) {
      if (msg.item.case === "metadata" && !state.metadata && historyCount(msg.item.value) > maxEvents) {
        return { kind: "skipped", reason: "too-large", detail: `${historyCount(msg.item.value)} events` };
      }
      batch.push(msg);
      if (msg.item.case === "caughtUp") {
        fold();
        return { kind: "ready", state };
      }
      if (batch.length >= FOLD_EVERY) fold();
    }
    // The stream ended before caught_up (only when the session vanished mid-read).
    return { kind: "skipped", reason: "unavailable", detail: "the stream ended before the history was complete" };
  } catch (e) {
    if (ac.signal.aborted) return { kind: "skipped", reason: "timeout" };
    if (e instanceof ConnectError && e.code === Code.NotFound) return { kind: "not-found" };
    return { kind: "skipped", reason: "unavailable", detail: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onOuterAbort);
    ac.abort();
  }
}
