// Many sessions seeded through gRPC, fast: the runtime's own Send and
// CancelSession, many sessions in flight at once, each session's messages in
// order. Calls are plain gRPC unary calls over node:http2
// (tests/support/grpc-unary.ts, shared with scripts/bench/scale-seed.ts): a
// full client library costs several times the CPU per call, and the test
// shares two cores with the console and the runtime it seeds. The runtime's
// rate limits stay on: the work is spread over enough senders that none
// exceeds its per-minute budget (60 session starts, 600 messages).
//
// Session n's shape (every tenth alike, so mode and state are mixed):
//   n % 10 = 0–2: handoff, resolved (SessionStart, HandoffOffer, HandoffAccept, Commitment)
//   3: task, resolved (SessionStart, TaskRequest, TaskAccept, TaskComplete, Commitment)
//   4–6: handoff, cancelled (SessionStart, CancelSession)
//   7–8: task, cancelled (SessionStart, CancelSession)
//   9: handoff, declined and committed negative (SessionStart, HandoffOffer, HandoffDecline, Commitment)
// and every `openEvery`-th session is left open after its SessionStart and
// its offer or request.

import { CancelSessionRequestSchema, CancelSessionResponseSchema, SendRequestSchema, SendResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";
import { GrpcUnaryClient } from "@/tests/support/grpc-unary";

export interface SeedPlan {
  /** In every session id ("fleet-<tag>-session-000042") and intent; unique per run. */
  tag: string;
  count: number;
  /** Every n-th session stays open. */
  openEvery: number;
  /** Sessions in flight at once. */
  concurrency: number;
  /** Distinct owners (each owner starts count / owners sessions). */
  owners: number;
}

export interface SeededSession {
  id: string;
  mode: "handoff" | "task";
  intent: string;
  /** Where it ended up: "resolved", "cancelled" or "open". */
  state: "resolved" | "cancelled" | "open";
}

/** One HTTP/2 connection making unary gRPC calls to the runtime. */
class Runtime {
  private readonly grpc: GrpcUnaryClient;
  constructor(url: string) {
    this.grpc = new GrpcUnaryClient(url);
  }

  async send(envelope: ReturnType<typeof buildEnvelope>, as: string): Promise<Ack | undefined> {
    return (await this.grpc.call("/macp.v1.MACPRuntimeService/Send", SendRequestSchema, { envelope }, SendResponseSchema, `Bearer ${as}`))
      .ack;
  }

  async cancel(sessionId: string, as: string): Promise<Ack | undefined> {
    const res = await this.grpc.call(
      "/macp.v1.MACPRuntimeService/CancelSession",
      CancelSessionRequestSchema,
      { sessionId, reason: "seeded" },
      CancelSessionResponseSchema,
      `Bearer ${as}`,
    );
    return res.ack;
  }

  close(): void {
    this.grpc.close();
  }
}

export function seededSession(tag: string, n: number, openEvery: number): SeededSession {
  const kind = n % 10;
  const mode = kind === 3 || kind === 7 || kind === 8 ? "task" : "handoff";
  const open = n % openEvery === openEvery - 1;
  const state = open ? "open" : kind >= 4 && kind <= 8 ? "cancelled" : "resolved";
  const id = `fleet-${tag}-session-${String(n).padStart(6, "0")}`;
  return { id, mode, state, intent: `${mode === "handoff" ? "Hand off" : "Delegate"} fleet shard ${String(n).padStart(6, "0")} of ${tag}` };
}

async function seedOne(rt: Runtime, plan: SeedPlan, n: number): Promise<number> {
  const s = seededSession(plan.tag, n, plan.openEvery);
  const owner = `agent://fleet/owner-${n % plan.owners}`;
  const peer = `agent://fleet/peer-${n % plan.owners}`;
  const mode = s.mode === "handoff" ? HANDOFF_MODE : TASK_MODE;
  let calls = 0;
  let seq = 0;
  const send = async (as: string, messageType: string, payload: PayloadInput): Promise<void> => {
    const envelope = buildEnvelope({ mode, messageType, sessionId: s.id, sender: as, messageId: `${s.id}-${seq++}`, payload });
    const ack = await rt.send(envelope, as);
    calls += 1;
    if (!ack?.ok) throw new Error(`${s.id} ${messageType} refused: ${ack?.error?.code ?? "?"} ${ack?.error?.message ?? ""}`);
  };
  const commit = (positive: boolean, action: string) =>
    send(owner, "Commitment", {
      commitmentId: `c-${s.id}`,
      action,
      authorityScope: s.mode,
      reason: "seeded",
      modeVersion: "1.0.0",
      policyVersion: "policy.default",
      configurationVersion: "config.default",
      outcomePositive: positive,
    });
  await send(owner, "SessionStart", {
    intent: s.intent,
    participants: [owner, peer],
    modeVersion: "1.0.0",
    configurationVersion: "config.default",
    ttlMs: 86_400_000n,
  });
  if (s.state === "cancelled") {
    const ack = await rt.cancel(s.id, owner);
    if (!ack?.ok) throw new Error(`${s.id} cancel refused: ${ack?.error?.code ?? "?"} ${ack?.error?.message ?? ""}`);
    return calls + 1;
  }
  if (s.mode === "handoff")
    await send(owner, "HandoffOffer", { handoffId: "h1", targetParticipant: peer, scope: `shard-${n % 997}`, reason: "rotation" });
  else
    await send(owner, "TaskRequest", { taskId: "t1", title: `reindex shard-${n % 997}`, requestedAssignee: peer, instructions: "reindex" });
  if (s.state === "open") return calls;
  const kind = n % 10;
  if (s.mode === "task") {
    await send(peer, "TaskAccept", { taskId: "t1", assignee: peer, reason: "on it" });
    await send(peer, "TaskComplete", { taskId: "t1", assignee: peer, summary: "done", output: new TextEncoder().encode("{}") });
    await commit(true, "task.completed");
  } else if (kind === 9) {
    await send(peer, "HandoffDecline", { handoffId: "h1", declinedBy: peer, reason: "busy" });
    await commit(false, "handoff.declined");
  } else {
    await send(peer, "HandoffAccept", { handoffId: "h1", acceptedBy: peer, reason: "ok" });
    await commit(true, "handoff.accepted");
  }
  return calls;
}

/** Seed `plan.count` sessions; resolves with the number of gRPC calls made. */
export async function seedSessions(runtimeUrl: string, plan: SeedPlan): Promise<{ calls: number; ms: number }> {
  const t0 = Date.now();
  // A few HTTP/2 connections, so one connection's flow control is not the limit.
  const runtimes = Array.from({ length: 4 }, () => new Runtime(runtimeUrl));
  let next = 0;
  let calls = 0;
  const worker = async (w: number): Promise<void> => {
    const rt = runtimes[w % runtimes.length] as Runtime;
    while (next < plan.count) {
      const n = next++;
      const made = await seedOne(rt, plan, n);
      calls += made;
    }
  };
  try {
    await Promise.all(Array.from({ length: plan.concurrency }, (_, w) => worker(w)));
  } finally {
    for (const rt of runtimes) rt.close();
  }
  return { calls, ms: Date.now() - t0 };
}
