// Run something once the page has finished loading and the browser is idle:
// at once (well, at the next idle period) when the document is already
// complete, otherwise after the window's `load` event. Used to start work
// that must not compete with the page's own first load (e.g. the inbox
// stream, whose code is fetched then). Pure: takes the window it schedules on.

/** The parts of `window` the scheduler uses (a fake one in tests). */
export interface LoadIdleWindow {
  document: { readonly readyState: string };
  addEventListener(type: "load", listener: () => void): void;
  removeEventListener(type: "load", listener: () => void): void;
  requestIdleCallback?: (callback: () => void, options?: { timeout?: number }) => number;
  cancelIdleCallback?: (handle: number) => void;
  setTimeout(callback: () => void, ms?: number): number;
  clearTimeout(handle: number): void;
}

/** The longest wait for an idle period after `load`. */
export const IDLE_TIMEOUT_MS = 1000;

/**
 * Calls `run` once, in the first idle period after the page has loaded
 * (`requestIdleCallback` with a timeout of `timeoutMs`, or `setTimeout(0)`
 * where there is none). Returns a canceller; after it `run` is never called.
 */
export function afterLoadAndIdle(win: LoadIdleWindow, run: () => void, timeoutMs = IDLE_TIMEOUT_MS): () => void {
  return schedule(win, run, timeoutMs);
}

/**
 * Calls `run` once, in a task right after the page has loaded, without
 * waiting for an idle period: for what the user is waiting on (the session
 * page's live view), which `load` must not wait for but which should not
 * queue behind the browser's idle heuristics either. Returns a canceller.
 */
export function afterLoad(win: LoadIdleWindow, run: () => void): () => void {
  return schedule(win, run, null);
}

/**
 * Calls `run` once, inside the window's `load` event (or at once when the
 * page has already loaded): for cheap work that only starts something, such
 * as asking for the live view's scripts, which should not wait a task more
 * behind the page's hydration. Returns a canceller.
 */
export function onLoad(win: LoadIdleWindow, run: () => void): () => void {
  if (win.document.readyState === "complete") {
    run();
    return () => undefined;
  }
  const listener = (): void => {
    win.removeEventListener("load", listener);
    run();
  };
  win.addEventListener("load", listener);
  return () => win.removeEventListener("load", listener);
}

function schedule(win: LoadIdleWindow, run: () => void, idleTimeoutMs: number | null): () => void {
  let cancelled = false;
  let cancelIdle: (() => void) | undefined;
  const fire = (): void => {
    if (!cancelled) run();
  };
  const whenIdle = (): void => {
    if (cancelled) return;
    if (idleTimeoutMs !== null && typeof win.requestIdleCallback === "function") {
      const handle = win.requestIdleCallback(fire, { timeout: idleTimeoutMs });
      cancelIdle = () => win.cancelIdleCallback?.(handle);
    } else {
      const handle = win.setTimeout(fire, 0);
      cancelIdle = () => win.clearTimeout(handle);
    }
  };
  const onLoad = (): void => {
    win.removeEventListener("load", onLoad);
    whenIdle();
  };
  if (win.document.readyState === "complete") whenIdle();
  else win.addEventListener("load", onLoad);
  return () => {
    cancelled = true;
    win.removeEventListener("load", onLoad);
    cancelIdle?.();
  };
}
