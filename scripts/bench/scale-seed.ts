// Seeder child of `npm run bench:scale`: writes history into a running
// runtime through gRPC Send, as agents would, in its own process (so the
// runtime's memory and CPU are its own). Sessions are seeded many at a time,
// each one's envelopes in order, so the runtime's group commit stays busy.
// Sends are plain gRPC unary calls over node:http2 (tests/support/grpc-unary.ts,
// shared with the e2e seeder): a full client library costs several times the CPU
// per call, and on a shared 2-core machine the seeder would be the limit.
//
// Session n's shape (n = from .. from + count - 1):
// - handoff and task alternate in runs of seven (and sessions with a large
//   context are handoffs):
// - handoff: Resolved: SessionStart, HandoffOffer, HandoffContext,
//   HandoffAccept, Commitment (5). Open: SessionStart, HandoffOffer and three
//   HandoffContexts, no answer yet (5).
// - task: Resolved: SessionStart, TaskRequest, TaskAccept, TaskUpdate,
//   TaskComplete, Commitment (6). Open: SessionStart, TaskRequest, TaskAccept,
//   two TaskUpdates (5).
// - every openEvery-th session is left open; every bigEvery-th handoff's
//   context is bigBytes long (the rest: a few hundred bytes of markdown).
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { CommitmentPayloadSchema, SendRequestSchema, SendResponseSchema, SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  HandoffAcceptPayloadSchema,
  HandoffContextPayloadSchema,
  HandoffOfferPayloadSchema,
} from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import {
  TaskAcceptPayloadSchema,
  TaskCompletePayloadSchema,
  TaskRequestPayloadSchema,
  TaskUpdatePayloadSchema,
} from "@/lib/gen/macp/modes/task/v1/task_pb";
import {
  DEFAULT_CONFIGURATION_VERSION,
  DEFAULT_POLICY_ID,
  HANDOFF_MODE,
  MACP_VERSION,
  MODE_VERSION,
  TASK_MODE,
} from "@/lib/macp/constants";
import { GrpcUnaryClient } from "@/tests/support/grpc-unary";
import { errorText, type SeedCommand, type SeedReply, type SeedResult } from "./scale-common";

const reply = (m: SeedReply) => process.send?.(m);

/** One HTTP/2 connection making gRPC Send calls. */
class RuntimeClient {
  private readonly grpc: GrpcUnaryClient;

  constructor(url: string) {
    this.grpc = new GrpcUnaryClient(url);
  }

  async send(envelope: Envelope, authorization: string): Promise<void> {
    const res = await this.grpc.call(
      "/macp.v1.MACPRuntimeService/Send",
      SendRequestSchema,
      { envelope },
      SendResponseSchema,
      authorization,
    );
    const ack = res.ack;
    if (!ack?.ok) throw new Error(`${envelope.sessionId} ${envelope.messageType} refused: ${ack?.error?.code} ${ack?.error?.message}`);
  }

  close(): void {
    this.grpc.close();
  }
}

/** A few HTTP/2 connections, used round-robin. */
function clients(url: string, n: number): RuntimeClient[] {
  return Array.from({ length: n }, () => new RuntimeClient(url));
}

const bin = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init));

const RUNBOOK = new TextEncoder().encode(
  "# Runbook\n\n- check the error budget dashboard\n- page the secondary if p99 > 500 ms for 10 min\n- rotate the on-call key\n".repeat(3),
);

interface Step {
  as: string;
  type: string;
  payload: Uint8Array;
}

function sessionSteps(n: number, mode: string, open: boolean, contextBytes: number): { sessionId: string; steps: Step[] } {
  const owner = `agent://owner-${n % 50}`;
  const other = `agent://peer-${n % 50}`;
  const start: Step = {
    as: owner,
    type: "SessionStart",
    payload: bin(SessionStartPayloadSchema, {
      intent: `${mode === HANDOFF_MODE ? "hand off" : "delegate"} service-${n % 997} on-call (${n})`,
      participants: [owner, other],
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      ttlMs: 86_400_000n,
    }),
  };
  const commit = (action: string): Step => ({
    as: owner,
    type: "Commitment",
    payload: bin(CommitmentPayloadSchema, {
      commitmentId: `c-${n}`,
      action,
      authorityScope: "service on-call",
      reason: "done",
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      policyVersion: DEFAULT_POLICY_ID,
      outcomePositive: true,
    }),
  });
  let steps: Step[];
  if (mode === HANDOFF_MODE) {
    const context = contextBytes > RUNBOOK.length ? new Uint8Array(contextBytes).fill(0x61) : RUNBOOK;
    const ctx: Step = {
      as: owner,
      type: "HandoffContext",
      payload: bin(HandoffContextPayloadSchema, { handoffId: "h1", contentType: "text/markdown", context }),
    };
    const offer: Step = {
      as: owner,
      type: "HandoffOffer",
      payload: bin(HandoffOfferPayloadSchema, {
        handoffId: "h1",
        targetParticipant: other,
        scope: `service-${n % 997}`,
        reason: "rotation",
      }),
    };
    steps = open
      ? [start, offer, ctx, ctx, ctx]
      : [
          start,
          offer,
          ctx,
          { as: other, type: "HandoffAccept", payload: bin(HandoffAcceptPayloadSchema, { handoffId: "h1", reason: "ok" }) },
          commit("handoff.accepted"),
        ];
  } else {
    const req: Step = {
      as: owner,
      type: "TaskRequest",
      payload: bin(TaskRequestPayloadSchema, { taskId: "t1", title: `rotate keys of service-${n % 997}`, requestedAssignee: other }),
    };
    const acc: Step = { as: other, type: "TaskAccept", payload: bin(TaskAcceptPayloadSchema, { taskId: "t1", assignee: other }) };
    const upd: Step = {
      as: other,
      type: "TaskUpdate",
      payload: bin(TaskUpdatePayloadSchema, { taskId: "t1", status: "running", progress: 0.5, message: "half way" }),
    };
    steps = open
      ? [start, req, acc, upd, upd]
      : [
          start,
          req,
          acc,
          upd,
          { as: other, type: "TaskComplete", payload: bin(TaskCompletePayloadSchema, { taskId: "t1", assignee: other, summary: "done" }) },
          commit("task.completed"),
        ];
  }
  return { sessionId: "", steps };
}

async function send(client: RuntimeClient, sessionId: string, mode: string, step: Step, messageId: string): Promise<void> {
  const envelope: Envelope = create(EnvelopeSchema, {
    macpVersion: MACP_VERSION,
    mode,
    messageType: step.type,
    messageId,
    sessionId,
    sender: step.as,
    timestampUnixMs: BigInt(Date.now()),
    payload: step.payload,
  });
  await client.send(envelope, `Bearer ${step.as}`);
}

async function seed(cmd: Extract<SeedCommand, { type: "seed" }>): Promise<SeedResult> {
  const t0 = performance.now();
  const pool = clients(cmd.url, 4);
  let next = cmd.from;
  const end = cmd.from + cmd.count;
  const result: SeedResult = { sessions: 0, open: 0, envelopes: 0, bytes: 0, ms: 0 };
  const worker = async (w: number) => {
    const client = pool[w % pool.length] as RuntimeClient;
    while (next < end) {
      const n = next++;
      const big = n % cmd.bigEvery === 3;
      const mode = big || Math.floor(n / 7) % 2 === 0 ? HANDOFF_MODE : TASK_MODE;
      const open = n % cmd.openEvery === cmd.openEvery - 1;
      const { steps } = sessionSteps(n, mode, open, big ? cmd.bigBytes : 0);
      const sessionId = `scale-${cmd.tag}-${String(n).padStart(9, "0")}`;
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i] as Step;
        await send(client, sessionId, mode, step, `${sessionId}-${i}`);
        result.envelopes++;
        result.bytes += step.payload.length;
      }
      result.sessions++;
      if (open) result.open++;
    }
  };
  try {
    await Promise.all(Array.from({ length: cmd.concurrency }, (_, w) => worker(w)));
  } finally {
    for (const c of pool) c.close();
  }
  result.ms = performance.now() - t0;
  return result;
}

/** One resolved handoff with `contexts` contexts of `bytes` each. */
async function bigSession(cmd: Extract<SeedCommand, { type: "big-session" }>): Promise<{ sessionId: string; result: SeedResult }> {
  const t0 = performance.now();
  const [client] = clients(cmd.url, 1) as [RuntimeClient];
  const sessionId = `scale-${cmd.tag}-big-history-session`;
  const { steps } = sessionSteps(0, HANDOFF_MODE, false, cmd.bytes);
  const [start, offer, ctx, accept, commit] = steps as [Step, Step, Step, Step, Step];
  const result: SeedResult = { sessions: 1, open: 0, envelopes: 0, bytes: 0, ms: 0 };
  const one = async (step: Step, id: string) => {
    await send(client, sessionId, HANDOFF_MODE, step, id);
    result.envelopes++;
    result.bytes += step.payload.length;
  };
  await one(start, "start");
  await one(offer, "offer");
  for (let i = 0; i < cmd.contexts; i += 8) {
    await Promise.all(Array.from({ length: Math.min(8, cmd.contexts - i) }, (_, k) => one(ctx, `ctx-${i + k}`)));
  }
  await one(accept, "accept");
  await one(commit, "commit");
  client.close();
  result.ms = performance.now() - t0;
  return { sessionId, result };
}

process.on("message", (m: SeedCommand) => {
  if (m.type === "exit") process.exit(0);
  const run =
    m.type === "seed"
      ? seed(m).then((result) => reply({ type: "seeded", id: m.id, result }))
      : bigSession(m).then((r) => reply({ type: "big-seeded", id: m.id, ...r }));
  run.catch((e: unknown) => reply({ type: "failed", id: m.id, error: errorText(e) }));
});
reply({ type: "ready" });
