// History at scale (see __fixtures__/runtime-scale-kit.ts): restart reads only the open sessions.
import { toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import type { RunningRuntime } from "@/lib/runtime";
import type { Identity } from "@/lib/runtime/auth";
import { agent, clientFor, newSessionId, tempDir } from "./harness";
import { cleanUp, dirs, start, stop } from "./__fixtures__/runtime-scale-kit";

afterEach(cleanUp);

const who = (sender: string): Identity => ({
  sender,
  canStartSessions: true,
  allowedModes: [],
  canManageRegistry: false,
  isObserver: false,
});

/** Admit envelopes in-process (the same admission path as Send, without the transport), many at a time. */
async function sendAll(rt: RunningRuntime, items: { as: string; env: Envelope }[]): Promise<void> {
  const acks = await Promise.all(items.map((i) => rt.kernel.send(who(i.as), i.env)));
  const bad = acks.find((a) => !a.ok);
  if (bad) throw new Error(`${bad.error?.code}: ${bad.error?.message}`);
}

function startEnv(sessionId: string, mode: string, participants: string[], messageId: string): Envelope {
  return buildEnvelope({
    mode,
    messageType: "SessionStart",
    sessionId,
    messageId,
    payload: {
      intent: "scale",
      participants,
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      ttlMs: 3_600_000n,
    },
  });
}

function commitEnv(sessionId: string, mode: string, action: string, positive: boolean): Envelope {
  return buildEnvelope({
    mode,
    messageType: "Commitment",
    sessionId,
    payload: {
      commitmentId: `c-${sessionId}`,
      action,
      authorityScope: "scale",
      reason: "done",
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      policyVersion: DEFAULT_POLICY_ID,
      outcomePositive: positive,
    },
  });
}

describe("restart with thousands of closed sessions", () => {
  it("reads only the open and suspended sessions, and answers the closed ones from storage exactly as before", async () => {
    const dataDir = tempDir("baton-scale-");
    dirs.push(dataDir);
    const env = { MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir };
    const first = await start(env);
    const closed = Array.from({ length: 2_000 }, () => newSessionId());
    const open = Array.from({ length: 5 }, () => newSessionId());
    const suspended = Array.from({ length: 2 }, () => newSessionId());
    const O = "agent://o";
    const T = "agent://t";
    const modeOf = (i: number) => (i % 2 === 0 ? HANDOFF_MODE : TASK_MODE);
    // Five envelopes per closed session, handoff and task alternating, 250 sessions per step.
    for (let b = 0; b < closed.length; b += 250) {
      const batch = closed.slice(b, b + 250).map((sid, j) => ({ sid, mode: modeOf(b + j) }));
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({ as: O, env: startEnv(sid, mode, [O, T], `${sid}-start`) })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: O,
          env:
            mode === HANDOFF_MODE
              ? buildEnvelope({ mode, messageType: "HandoffOffer", sessionId: sid, payload: { handoffId: "h1", targetParticipant: T } })
              : buildEnvelope({
                  mode,
                  messageType: "TaskRequest",
                  sessionId: sid,
                  payload: { taskId: "t1", title: "t", requestedAssignee: T },
                }),
        })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: mode === HANDOFF_MODE ? O : T,
          env:
            mode === HANDOFF_MODE
              ? buildEnvelope({
                  mode,
                  messageType: "HandoffContext",
                  sessionId: sid,
                  payload: { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode("runbook") },
                })
              : buildEnvelope({ mode, messageType: "TaskAccept", sessionId: sid, payload: { taskId: "t1", assignee: T } }),
        })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: T,
          env:
            mode === HANDOFF_MODE
              ? buildEnvelope({
                  mode,
                  messageType: "HandoffAccept",
                  sessionId: sid,
                  messageId: `${sid}-accept`,
                  payload: { handoffId: "h1" },
                })
              : buildEnvelope({
                  mode,
                  messageType: "TaskComplete",
                  sessionId: sid,
                  messageId: `${sid}-accept`,
                  payload: { taskId: "t1", assignee: T, summary: "ok" },
                }),
        })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: O,
          env: commitEnv(sid, mode, mode === HANDOFF_MODE ? "handoff.accepted" : "task.completed", true),
        })),
      );
    }
    for (const sid of [...open, ...suspended]) {
      await sendAll(first, [{ as: O, env: startEnv(sid, HANDOFF_MODE, [O, T], `${sid}-start`) }]);
    }
    for (const sid of open) {
      await sendAll(first, [
        {
          as: O,
          env: buildEnvelope({
            mode: HANDOFF_MODE,
            messageType: "HandoffOffer",
            sessionId: sid,
            payload: { handoffId: "h1", targetParticipant: T },
          }),
        },
      ]);
    }
    for (const sid of suspended) await first.kernel.control(who(O), "suspend", sid, "later");
    // Closed sessions left memory as they closed.
    expect(first.kernel.stats()).toMatchObject({ resident: open.length + suspended.length, open: open.length });
    const before = (await clientFor(first, O).listSessions({})).sessions.map((m) => toJson(SessionMetadataSchema, m));
    expect(before).toHaveLength(closed.length + open.length + suspended.length);
    await stop(first);

    const second = await start(env);
    const resident = open.length + suspended.length;
    // What the restart read: the resident rows of the session index and those sessions' records (start + offer, start + suspend).
    expect(second.kernel.loadReport).toMatchObject({ resident, open: open.length, indexRows: resident, records: 2 * resident, indexed: 0 });
    expect(second.kernel.storageReads()).toMatchObject({ indexRows: resident, records: 2 * resident, messageLookups: 0 });
    expect(second.kernel.stats()).toMatchObject({ resident, closedCached: 0 });

    // Every answer about the closed sessions is the same as before the restart, read from storage on demand.
    const c = clientFor(second, O);
    expect((await c.listSessions({})).sessions.map((m) => toJson(SessionMetadataSchema, m))).toEqual(before);
    // On grpc-js the answer is assembled from the stored summaries; it is the same list as built from messages.
    expect(second.kernel.listSessions().map((m) => toJson(SessionMetadataSchema, m))).toEqual(before);
    const oldest = closed[0] as string;
    expect((await c.getSession({ sessionId: oldest })).metadata?.state).toBe(SessionState.RESOLVED);
    const resend = await agent(second, T, oldest).send("HandoffAccept", { handoffId: "h1" }, { messageId: `${oldest}-accept` });
    expect(resend).toMatchObject({ ok: true, duplicate: true, sessionState: SessionState.RESOLVED });
    expect((await agent(second, T, oldest).send("HandoffAccept", { handoffId: "h1" })).error?.code).toBe("SESSION_NOT_OPEN");
    await expect(clientFor(second, "agent://stranger").getSession({ sessionId: oldest })).rejects.toMatchObject({
      code: Code.PermissionDenied,
    });
    // WatchSessions' snapshot pages through the index: every session once, in the order they started.
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const r of clientFor(second, O).watchSessions({}, { signal: ac.signal })) {
      seen.push(r.event?.session?.sessionId ?? "");
      if (seen.length === before.length) break;
    }
    ac.abort();
    expect(seen).toEqual(before.map((m) => (m as { sessionId: string }).sessionId));
    // Reading a few closed sessions kept at most the configured number of them in memory.
    expect(second.kernel.stats().closedCached).toBeLessThanOrEqual(second.config.closedSessionCache);
  }, 60_000);
});
