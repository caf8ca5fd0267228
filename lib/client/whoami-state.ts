// The sign-in check's state and its transitions, pure (the store, timers and
// fetches are in lib/client/use-whoami.ts). The rules are those the check
// had as a TanStack query: an answer is fresh for a minute; a component
// mounting or the tab coming back re-checks only a stale answer; the
// five-minute re-check runs whatever the age, but not in a hidden tab; a
// failed check is retried twice (after 1 s, then 2 s) before it counts; a
// failure keeps the previous answer and only raises `error`.

import type { AuthMethods, WhoAmI } from "@/lib/views/sign-in";

/** An answer younger than this is not re-checked on mount or focus. */
export const WHOAMI_STALE_MS = 60_000;
/** Re-checked this often while the tab is visible. */
export const WHOAMI_INTERVAL_MS = 5 * 60_000;
/** Retries after a failed fetch, before the check counts as failed. */
export const AUTH_RETRIES = 2;

export interface AuthState {
  /** undefined while the first answer is pending; null when signed out. */
  me: WhoAmI | null | undefined;
  /** The last check failed (network); `me` keeps the previous answer. */
  error: boolean;
  /** When `me` was last answered (Date.now()); 0 = never. */
  updatedAt: number;
  /** refresh() asked for a new answer: stale whatever its age until one comes. */
  invalidated: boolean;
  /** GET /auth/methods, fetched once; undefined until it answers. */
  methods: AuthMethods | undefined;
}

export const INITIAL_AUTH_STATE: AuthState = Object.freeze({
  me: undefined,
  error: false,
  updatedAt: 0,
  invalidated: false,
  methods: undefined,
});

/** Why a check is considered. */
export type CheckReason = "mount" | "focus" | "interval" | "refresh";

export function isStale(s: AuthState, now: number): boolean {
  return s.me === undefined || s.invalidated || now >= s.updatedAt + WHOAMI_STALE_MS;
}

/**
 * Whether to fetch /auth/whoami now. A check already in flight answers every
 * reason but "refresh" (which wants an answer given after it was asked).
 */
export function shouldCheck(s: AuthState, reason: CheckReason, ctx: { now: number; fetching: boolean; visible: boolean }): boolean {
  if (reason === "refresh") return true;
  if (ctx.fetching) return false;
  switch (reason) {
    case "interval":
      return ctx.visible;
    case "focus":
      return ctx.visible && isStale(s, ctx.now);
    case "mount":
      return isStale(s, ctx.now);
  }
}

/** An answer (from the server, or set after sign-in, sign-out or a password change). */
export function answered(s: AuthState, me: WhoAmI | null, now: number): AuthState {
  return { ...s, me, error: false, updatedAt: now, invalidated: false };
}

/** The check failed after its retries: keep the previous answer. */
export function failed(s: AuthState): AuthState {
  return s.error ? s : { ...s, error: true };
}

export function invalidated(s: AuthState): AuthState {
  return s.invalidated ? s : { ...s, invalidated: true };
}

/** /auth/methods is fetched when unknown and not already being fetched. */
export function shouldLoadMethods(s: AuthState, fetching: boolean): boolean {
  return s.methods === undefined && !fetching;
}

export function methodsAnswered(s: AuthState, methods: AuthMethods): AuthState {
  return { ...s, methods };
}

/** Wait before retry number `failures + 1`: 1 s, 2 s, 4 s… at most 30 s. */
export function retryDelay(failures: number): number {
  return Math.min(1000 * 2 ** failures, 30_000);
}

export type Attempted<T> = { kind: "ok"; value: T } | { kind: "failed" } | { kind: "superseded" };

/**
 * Runs `load` with up to AUTH_RETRIES retries (waiting retryDelay between
 * them). Gives up as "superseded" as soon as `current()` turns false (a newer
 * check or a set() made this one moot), so its answer is never applied.
 */
export async function attemptWithRetries<T>(
  load: () => Promise<T>,
  current: () => boolean,
  sleep: (ms: number) => Promise<void>,
): Promise<Attempted<T>> {
  for (let failures = 0; ; failures++) {
    try {
      const value = await load();
      return current() ? { kind: "ok", value } : { kind: "superseded" };
    } catch {
      if (!current()) return { kind: "superseded" };
      if (failures >= AUTH_RETRIES) return { kind: "failed" };
    }
    await sleep(retryDelay(failures));
    if (!current()) return { kind: "superseded" };
  }
}
