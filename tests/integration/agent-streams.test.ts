// The agent layer (lib/agent) against the real runtime on loopback: streams.
import { Code, type ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HandoffSession, MacpStreamError, type SequencedEnvelope } from "@/lib/agent";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { waitFor } from "./harness";
import { clientAs, OWNER, rejection, TARGET, useAgentRuntime } from "./__fixtures__/agent-kit";

useAgentRuntime();

describe("streams", () => {
  it("subscribe numbers envelopes explicitly, resumes after a sequence and delivers live", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "stream", participants: [OWNER, TARGET], ttlMs: 60_000 });
    await owner.offer({ targetParticipant: TARGET });
    const got: SequencedEnvelope[] = [];
    const ac = new AbortController();
    const target = clientAs(TARGET);
    const done = (async () => {
      for await (const ev of target.subscribe(owner.sessionId, 1, { signal: ac.signal })) got.push(ev);
    })();
    await waitFor(() => got.length === 1, 5_000, "replay");
    expect(got[0]).toMatchObject({ sequence: 2 });
    expect(got[0]?.envelope.messageType).toBe("HandoffOffer");
    await new HandoffSession(target, { sessionId: owner.sessionId }).acceptHandoff({ handoffId: "h1" });
    await waitFor(() => got.length === 2, 5_000, "live accept");
    expect(got[1]?.sequence).toBe(3);
    expect(got[1]?.envelope.sender).toBe(TARGET);
    ac.abort();
    await done; // ends quietly on abort
  });

  it("subscribe by a non-participant throws MacpStreamError FORBIDDEN", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "private", participants: [OWNER, TARGET], ttlMs: 60_000 });
    const outsider = clientAs("agent://outsider");
    const err = await rejection(
      (async () => {
        for await (const _ of outsider.subscribe(owner.sessionId)) void _;
      })(),
    );
    expect(err).toBeInstanceOf(MacpStreamError);
    expect((err as MacpStreamError).code).toBe("FORBIDDEN");
    const g = await rejection(outsider.getSession(owner.sessionId));
    expect((g as ConnectError).code).toBe(Code.PermissionDenied);
  });

  it("watchSessions yields the snapshot and live lifecycle events", async () => {
    const watcher = clientAs("agent://watcher");
    const seen: { type: string; sessionId: string; state: string }[] = [];
    const ac = new AbortController();
    const done = (async () => {
      for await (const ev of watcher.watchSessions({ signal: ac.signal })) {
        seen.push({
          type: EventType[ev.eventType] ?? "?",
          sessionId: ev.session?.sessionId ?? "",
          state: SessionState[ev.session?.state ?? 0] ?? "?",
        });
      }
    })();
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "watched", participants: [OWNER, TARGET], ttlMs: 60_000 });
    await waitFor(() => seen.some((e) => e.sessionId === owner.sessionId && e.type === "CREATED"), 5_000, "CREATED");
    await owner.cancel("done");
    await waitFor(() => seen.some((e) => e.sessionId === owner.sessionId && e.type === "CANCELLED"), 5_000, "CANCELLED");
    expect((await watcher.listSessions()).some((m) => m.sessionId === owner.sessionId)).toBe(true);
    ac.abort();
    await done;
  });
});
