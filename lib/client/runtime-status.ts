"use client";
// Whether the console reaches its MACP runtime, as the browser learns it from
// GET /status/runtime (lib/server/status-routes.ts): polled after the page
// has loaded, every 15 s while all is well, every 3 s during an outage, and
// not at all while the tab is hidden. The outage banner (components/
// RuntimeBanner.tsx) and the screens that would otherwise wait forever (the
// inbox, the new-session form) read it from this store.

import { useMemo } from "react";
import { create } from "zustand";

export interface RuntimeStatus {
  reachable: boolean | null;
  kind: "embedded" | "external";
  address: string;
  sinceMs: number;
  checkedAtMs: number;
  error: string;
}

export type Outage =
  /** The console answers, the runtime does not. */
  | { kind: "runtime"; address: string; runtimeKind: RuntimeStatus["kind"]; sinceMs: number }
  /** The console itself did not answer (twice in a row). */
  | { kind: "console" };

interface RuntimeStatusState {
  status: RuntimeStatus | null;
  /** Consecutive failed polls of the console itself. */
  consoleFailures: number;
}

export const useRuntimeStatusStore = create<RuntimeStatusState>()(() => ({ status: null, consoleFailures: 0 }));

/** The outage to show, if any. Pure. */
export function outageOf(s: RuntimeStatusState): Outage | null {
  if (s.consoleFailures >= 2) return { kind: "console" };
  if (s.status?.reachable === false)
    return { kind: "runtime", address: s.status.address, runtimeKind: s.status.kind, sinceMs: s.status.sinceMs };
  return null;
}

/** The outage to show, if any (a new object only when the store changed: selectors must be stable). */
export function useOutage(): Outage | null {
  const status = useRuntimeStatusStore((s) => s.status);
  const consoleFailures = useRuntimeStatusStore((s) => s.consoleFailures);
  return useMemo(() => outageOf({ status, consoleFailures }), [status, consoleFailures]);
}

/** Read a /status/runtime answer; null when it is not one. */
export function parseRuntimeStatus(body: unknown): RuntimeStatus | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  const reachable = b.reachable;
  if (!(reachable === null || typeof reachable === "boolean")) return null;
  if (b.kind !== "embedded" && b.kind !== "external") return null;
  if (typeof b.address !== "string" || typeof b.sinceMs !== "number" || typeof b.checkedAtMs !== "number") return null;
  return {
    reachable,
    kind: b.kind,
    address: b.address,
    sinceMs: b.sinceMs,
    checkedAtMs: b.checkedAtMs,
    error: typeof b.error === "string" ? b.error : "",
  };
}

export const POLL_OK_MS = 15_000;
export const POLL_DOWN_MS = 3_000;

export interface PollerEnv {
  fetch(url: string, init: RequestInit): Promise<Response>;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  hidden(): boolean;
  onVisible(fn: () => void): () => void;
}

/** Poll /status/runtime into the store until the returned function is called. */
export function startRuntimeStatusPoller(env: PollerEnv): () => void {
  let stopped = false;
  let timer: unknown;
  let waitingForVisible: (() => void) | undefined;
  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = env.setTimeout(() => void poll(), ms);
  };
  const poll = async (): Promise<void> => {
    if (stopped) return;
    if (env.hidden()) {
      // Nobody looks: wait until the tab is shown again, then poll at once.
      waitingForVisible ??= env.onVisible(() => {
        waitingForVisible?.();
        waitingForVisible = undefined;
        void poll();
      });
      return;
    }
    let status: RuntimeStatus | null = null;
    let answered = false;
    try {
      const res = await env.fetch("/status/runtime", { cache: "no-store", credentials: "same-origin" });
      answered = true;
      if (res.ok) status = parseRuntimeStatus(await res.json());
    } catch {
      answered = false;
    }
    if (stopped) return;
    const prev = useRuntimeStatusStore.getState();
    useRuntimeStatusStore.setState({
      consoleFailures: answered ? 0 : prev.consoleFailures + 1,
      ...(status ? { status } : {}),
    });
    schedule(outageOf(useRuntimeStatusStore.getState()) ? POLL_DOWN_MS : POLL_OK_MS);
  };
  void poll();
  return () => {
    stopped = true;
    env.clearTimeout(timer);
    waitingForVisible?.();
  };
}
