// `npm run bench:web`: seed the running app with real agents over gRPC
// (lib/agent: MacpClient + HandoffSession/TaskSession, dev bearer auth):
// a list of small handoff and task sessions in assorted phases, and one
// handoff session with exactly `events` accepted envelopes that stays open
// so more context can be sent live. Benchmark code only.

import { Auth, HandoffSession, MacpClient, TaskSession } from "@/lib/agent";

const OWNERS = [
  "agent://bench/oncall-ana",
  "agent://bench/oncall-ben",
  "agent://bench/ops-cho",
  "agent://bench/ops-dev",
  "agent://bench/sre-eli",
];
const PEERS = ["agent://bench/oncall-fay", "agent://bench/oncall-gus", "agent://bench/ops-hal", "agent://bench/sre-ivy"];
const SERVICES = ["payments-api", "ledger", "checkout", "search", "notifications", "auth-gateway", "billing-batch"];

export interface Agents {
  client(id: string): MacpClient;
  closeAll(): void;
}

export function agents(address: string): Agents {
  const clients = new Map<string, MacpClient>();
  return {
    client(id) {
      let c = clients.get(id);
      if (!c) {
        c = new MacpClient({ address, auth: Auth.devAgent(id), clientName: "baton-bench-web" });
        clients.set(id, c);
      }
      return c;
    },
    closeAll() {
      for (const c of clients.values()) c.close();
      clients.clear();
    },
  };
}

/** Wait until the runtime answers Initialize (it starts with the console). */
export async function waitForRuntime(a: Agents, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await a.client(OWNERS[0]!).initialize({ timeoutMs: 2_000 });
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** A small context payload; the kind rotates markdown → JSON → plain text. */
export function contextPayload(i: number): { contentType: string; context: string } {
  const svc = SERVICES[i % SERVICES.length]!;
  switch (i % 3) {
    case 0:
      return {
        contentType: "text/markdown",
        context: [
          `## ${svc}: step ${i}`,
          "",
          `- check the **error budget** on \`${svc}\` (p99 < ${200 + (i % 50)} ms)`,
          `- runbook: [${svc} on-call](https://runbooks.example.com/${svc}#step-${i})`,
          "- page the secondary if the burn rate stays above 2× for 10 min",
          "",
          "| signal | threshold |",
          "| --- | --- |",
          `| 5xx rate | ${(i % 7) / 10 + 0.5}% |`,
          `| queue depth | ${100 + (i % 900)} |`,
        ].join("\n"),
      };
    case 1:
      return {
        contentType: "application/json",
        context: JSON.stringify({
          step: i,
          service: svc,
          region: ["eu-west-1", "us-east-1", "ap-south-1"][i % 3],
          checks: [
            { name: "latency_p99_ms", value: 120 + (i % 80), ok: true },
            { name: "error_rate", value: ((i % 9) / 1000).toFixed(3), ok: i % 11 !== 0 },
          ],
          dashboards: [`https://grafana.example.com/d/${svc}`],
        }),
      };
    default:
      return {
        contentType: "text/plain",
        context: `Shift note ${i}: ${svc} deploy ${1000 + i} rolled out at ${String(i % 24).padStart(2, "0")}:${String(i % 60).padStart(2, "0")} UTC; no open incidents, two flaky alerts silenced until the fix lands.`,
      };
  }
}

/** `count` small sessions across handoff and task mode, in assorted phases. */
export async function seedList(a: Agents, count: number): Promise<number> {
  let envelopes = 0;
  const plan = Array.from({ length: count }, (_, i) => i);
  await pool(plan, 8, async (i) => {
    const owner = OWNERS[i % OWNERS.length]!;
    const peer = PEERS[i % PEERS.length]!;
    const svc = SERVICES[i % SERVICES.length]!;
    const participants = [owner, peer];
    if (i % 4 === 3) {
      const req = new TaskSession(a.client(owner));
      const wrk = new TaskSession(a.client(peer), { sessionId: req.sessionId, projection: req.projection });
      await req.start({ intent: `${svc}: rotate credentials (${i})`, participants, ttlMs: 3_600_000 });
      await req.request({ title: `Rotate ${svc} credentials`, requestedAssignee: peer, instructions: "Rotate and verify; report back." });
      envelopes += 2;
      if (i % 8 === 7) return;
      await wrk.acceptTask({ reason: "on it" });
      await wrk.update({ progress: (40 + (i % 50)) / 100, message: "halfway" });
      envelopes += 2;
      if (i % 3 === 0) return;
      await wrk.complete({ summary: "rotated, all checks green", output: { rotated: 3 } });
      await req.commit({ action: "task.completed", reason: "verified" });
      envelopes += 2;
      return;
    }
    const own = new HandoffSession(a.client(owner));
    const tgt = new HandoffSession(a.client(peer), { sessionId: own.sessionId, projection: own.projection });
    await own.start({ intent: `${svc} primary on-call (${i})`, participants, ttlMs: 3_600_000 });
    envelopes += 1;
    if (i % 9 === 0) return; // started, nothing offered yet
    await own.offer({ targetParticipant: peer, scope: `${svc} primary on-call`, reason: "rotation" });
    await own.sendContext(contextPayload(i));
    envelopes += 2;
    if (i % 5 === 1) return; // context shared, waiting for an answer
    if (i % 6 === 2) {
      await tgt.decline({ reason: "out of office" });
      await own.commit({ action: "handoff.declined", reason: "nobody free" });
      envelopes += 2;
      return;
    }
    await tgt.acceptHandoff({ reason: "taking it" });
    envelopes += 1;
    if (i % 2 === 0) {
      await own.commit({ action: "handoff.accepted", reason: "rotation complete" });
      envelopes += 1;
    }
  });
  return envelopes;
}

export interface BigSession {
  sessionId: string;
  owner: HandoffSession;
  /** The open offer new context is attached to. */
  handoffId: string;
  events: number;
}

/**
 * One handoff session with exactly `events` envelopes: start, offer h1 to
 * bob, context, bob declines, offer h2 to carol, context up to the total.
 * It stays open (h2 unanswered) so the live phase can add more context.
 */
export async function seedBigSession(a: Agents, events: number): Promise<BigSession> {
  const alice = "agent://bench/big-alice";
  const bob = "agent://bench/big-bob";
  const carol = "agent://bench/big-carol";
  const owner = new HandoffSession(a.client(alice));
  const bobS = new HandoffSession(a.client(bob), { sessionId: owner.sessionId, projection: owner.projection });
  await owner.start({
    intent: `payments-api: hand over primary on-call (${events.toLocaleString("en-US")}-event bench session)`,
    participants: [alice, bob, carol],
    ttlMs: 86_400_000,
  });
  await owner.offer({ handoffId: "h1", targetParticipant: bob, scope: "payments-api primary on-call", reason: "end of shift" });
  // 1 start + 1 offer + first contexts + 1 decline + 1 offer + second contexts.
  const contexts = events - 4;
  const first = Math.floor(contexts * 0.3);
  const second = contexts - first;
  await pool(
    Array.from({ length: first }, (_, i) => i),
    16,
    async (i) => {
      await owner.sendContext({ handoffId: "h1", ...contextPayload(i) });
    },
  );
  await bobS.decline({ handoffId: "h1", reason: "already on call for ledger this week" });
  await owner.offer({ handoffId: "h2", targetParticipant: carol, scope: "payments-api primary on-call", reason: "re-offer after decline" });
  await pool(
    Array.from({ length: second }, (_, i) => i),
    16,
    async (i) => {
      await owner.sendContext({ handoffId: "h2", ...contextPayload(first + i) });
    },
  );
  return { sessionId: owner.sessionId, owner, handoffId: "h2", events };
}
