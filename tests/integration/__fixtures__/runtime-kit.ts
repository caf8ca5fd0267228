// Shared by the runtime-*.test.ts files, which test the embedded runtime over real gRPC on
// loopback. Each file starts its own runtime (useTestRuntime).
import { ConnectError, type Code } from "@connectrpc/connect";
import { afterAll, beforeAll, expect } from "vitest";
import { SessionLifecycleEvent_EventType as EventType, type SessionLifecycleEvent } from "@/lib/gen/macp/v1/core_pb";
import type { RunningRuntime } from "@/lib/runtime";
import { clientFor, startTestRuntime } from "../harness";

export let rt: RunningRuntime;

/** Starts the runtime before a file's tests, and closes it after them. */
export function useTestRuntime(): void {
  beforeAll(async () => {
    rt = await startTestRuntime({ MACP_MAX_PAYLOAD_BYTES: "4096", MACP_EXPIRY_SWEEP_MS: "50" });
  });
  afterAll(async () => {
    await rt?.close();
  });
}

export async function expectCode(p: Promise<unknown>, code: Code) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(code);
  return err as ConnectError;
}

/** Runs a WatchSessions stream in the background and records its events. */
export function watch(identity = "watcher") {
  const events: SessionLifecycleEvent[] = [];
  const ac = new AbortController();
  const done = (async () => {
    try {
      for await (const r of clientFor(rt, identity).watchSessions({}, { signal: ac.signal })) if (r.event) events.push(r.event);
    } catch {
      /* aborted */
    }
  })();
  return {
    events,
    of: (sid: string) => events.filter((e) => e.session?.sessionId === sid).map((e) => EventType[e.eventType]),
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}
