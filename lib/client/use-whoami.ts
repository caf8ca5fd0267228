"use client";
// useWhoAmI(): who is signed in (GET /auth/whoami), or null when nobody is.
// Re-checked when the tab regains focus and every few minutes, so a sign-in
// (login) that ended elsewhere (sign-out in another tab, idle timeout, disabled
// account) is noticed; the CSRF token it carries goes to the Connect
// transport through lib/client/csrf-store.ts.
//
// A small zustand store rather than a TanStack query, so the layout (header,
// sign-in gate) does not load TanStack Query. The rules (freshness, retries,
// what a failure keeps) are in lib/client/whoami-state.ts. The store is
// written only in the browser (effects and event handlers); the server
// render, and the hydration render, always see the initial state.

import { useEffect } from "react";
import { createStore, useStore } from "zustand";
import { fetchAuthMethods, fetchWhoAmI, type AuthMethods, type WhoAmI } from "@/lib/views/sign-in";
import { csrfStore } from "@/lib/client/csrf-store";
import {
  answered,
  attemptWithRetries,
  failed,
  INITIAL_AUTH_STATE,
  invalidated,
  methodsAnswered,
  shouldCheck,
  shouldLoadMethods,
  WHOAMI_INTERVAL_MS,
  type AuthState,
  type CheckReason,
} from "@/lib/client/whoami-state";

export interface WhoAmIState {
  /** undefined while the first answer is pending; null when signed out. */
  me: WhoAmI | null | undefined;
  /** The last check failed (network); `me` keeps the previous answer. */
  error: boolean;
  refresh(): Promise<void>;
  /** Replace the cached answer (after sign-in, sign-out or a password change). */
  set(me: WhoAmI | null): void;
}

/** The page's sign-in state (read it with the hooks below). */
export const authStore = createStore<AuthState>()(() => INITIAL_AUTH_STATE);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const visible = (): boolean => typeof document === "undefined" || document.visibilityState !== "hidden";

/** Bumped by every new check and every set(): only the latest may answer. */
let generation = 0;
let inFlight: Promise<void> | undefined;

function apply(me: WhoAmI | null): void {
  csrfStore.set(me?.csrfToken);
  authStore.setState((s) => answered(s, me, Date.now()));
}

/** Fetches /auth/whoami if `reason` calls for it; resolves when the check that covers it is done. */
export function checkWhoAmI(reason: CheckReason): Promise<void> {
  const fetching = inFlight !== undefined;
  if (!shouldCheck(authStore.getState(), reason, { now: Date.now(), fetching, visible: visible() })) return inFlight ?? Promise.resolve();
  if (reason === "refresh") authStore.setState(invalidated);
  const mine = ++generation;
  const current = (): boolean => mine === generation;
  const run = attemptWithRetries(() => fetchWhoAmI(), current, sleep).then((r) => {
    if (r.kind === "ok") apply(r.value);
    else if (r.kind === "failed") authStore.setState(failed);
  });
  const settled = run.finally(() => {
    if (inFlight === settled) inFlight = undefined;
  });
  inFlight = settled;
  return settled;
}

/** Fetch a new answer now (even when the current one is fresh). */
export function refreshWhoAmI(): Promise<void> {
  return checkWhoAmI("refresh");
}

/** Replace the answer (after sign-in, sign-out or a password change); a check in flight no longer counts. */
export function setWhoAmI(me: WhoAmI | null): void {
  generation++;
  inFlight = undefined;
  apply(me);
}

let methodsLoading = false;

function loadAuthMethods(): void {
  if (!shouldLoadMethods(authStore.getState(), methodsLoading)) return;
  methodsLoading = true;
  void attemptWithRetries(
    () => fetchAuthMethods(),
    () => true,
    sleep,
  ).then((r) => {
    methodsLoading = false;
    // A failure leaves `methods` unknown; the next component to mount tries again.
    if (r.kind === "ok") authStore.setState((s) => methodsAnswered(s, r.value));
  });
}

// While any component watches the sign-in: a re-check when the tab comes
// back (focus or visibility) and every WHOAMI_INTERVAL_MS.
let watchers = 0;
let stopWatching: (() => void) | undefined;

function watch(): () => void {
  watchers++;
  if (watchers === 1) {
    const onFocus = (): void => void checkWhoAmI("focus");
    const timer = setInterval(() => void checkWhoAmI("interval"), WHOAMI_INTERVAL_MS);
    window.addEventListener("focus", onFocus);
    document.addEventListener("visibilitychange", onFocus);
    stopWatching = () => {
      clearInterval(timer);
      window.removeEventListener("focus", onFocus);
      document.removeEventListener("visibilitychange", onFocus);
    };
  }
  void checkWhoAmI("mount");
  return () => {
    watchers--;
    if (watchers === 0) {
      stopWatching?.();
      stopWatching = undefined;
    }
  };
}

export function useWhoAmI(): WhoAmIState {
  const me = useStore(authStore, (s) => s.me);
  const error = useStore(authStore, (s) => s.error);
  useEffect(watch, []);
  return { me, error, refresh: refreshWhoAmI, set: setWhoAmI };
}

export function useAuthMethods(): AuthMethods | undefined {
  const methods = useStore(authStore, (s) => s.methods);
  useEffect(loadAuthMethods, []);
  return methods;
}
