// Load-generator child of `npm run bench:runtime`. It runs in its own process
// so that the client's CPU (protobuf encode, HTTP/2 framing, promise churn)
// does not come out of the server's core. Talks to any server that speaks
// macp.v1.MACPRuntimeService over h2c gRPC, as an SDK agent would: connect-node
// gRPC transport, one HTTP/2 connection (one Http2SessionManager) shared by
// all callers of a job.
//
// The sends job is here; the fan-out job is in runtime-load-fanout.ts and
// the MACP client and envelopes in runtime-load-client.ts.
import { HANDOFF_TYPES } from "@/lib/macp/constants";
import { errorText, sleep, summarize, Samples, type LoadCommand, type LoadReply, type SendsJob, type SendsResult } from "./runtime-common";
import { bearer, clientMeter, connection, contextPayload, envelope, openHandoff } from "./runtime-load-client";
import { runFanout } from "./runtime-load-fanout";

const reply = (m: LoadReply) => process.send?.(m);

// ------------------------------------------------------------------ sends

async function runSends(job: SendsJob): Promise<SendsResult> {
  const { manager, client } = connection(job.url);
  const payload = contextPayload(job.contextBytes);
  const run = Math.random().toString(36).slice(2, 8);
  try {
    const callers = await Promise.all(
      Array.from({ length: job.concurrency }, async (_, i) => {
        const owner = `bench-owner-${run}-${i}`;
        const sessionId = await openHandoff(client, owner, `bench-target-${run}-${i}`, `${run}-${i}`);
        return { sessionId, headers: bearer(owner), prefix: `${run}-${i}-ctx-` };
      }),
    );
    const lat = new Samples();
    let okAcks = 0;
    let allOk = callers.length * 2; // SessionStart + HandoffOffer per caller
    let failedAcks = 0;
    let errors = 0;
    let firstError: string | undefined;
    const meter = { stop: null as null | (() => { cpuCores: number; eventLoopP99Ms: number }) };
    const t0 = performance.now();
    const tw = t0 + job.warmupMs;
    const te = tw + job.durationMs;
    const warm = setTimeout(() => (meter.stop = clientMeter()), job.warmupMs);

    await Promise.all(
      callers.map(async (c) => {
        let n = 0;
        for (;;) {
          const s = performance.now();
          if (s >= te) return;
          try {
            const res = await client.send(
              { envelope: envelope(c.sessionId, HANDOFF_TYPES.Context, c.prefix + n++, payload) },
              { headers: c.headers },
            );
            const e = performance.now();
            if (res.ack?.ok) allOk++;
            if (e < tw || e > te) continue;
            if (res.ack?.ok) {
              okAcks++;
              lat.push(e - s);
            } else {
              failedAcks++;
              firstError ??= `${res.ack?.error?.code}: ${res.ack?.error?.message}`;
            }
          } catch (err) {
            errors++;
            firstError ??= errorText(err);
            await sleep(1);
          }
        }
      }),
    );
    clearTimeout(warm);
    const client_ = meter.stop ? meter.stop() : { cpuCores: NaN, eventLoopP99Ms: NaN };
    return {
      concurrency: job.concurrency,
      okAcks,
      allOkAcks: allOk,
      failedAcks,
      errors,
      firstError,
      measuredMs: job.durationMs,
      sendsPerSecond: okAcks / (job.durationMs / 1000),
      latency: summarize(lat.values()),
      client: client_,
    };
  } finally {
    manager.abort();
  }
}

// -------------------------------------------------------------------- main

process.on("message", async (cmd: LoadCommand) => {
  if (cmd.type === "exit") process.exit(0);
  try {
    if (cmd.type === "sends") reply({ type: "sends-done", id: cmd.id, result: await runSends(cmd) });
    else if (cmd.type === "fanout") reply({ type: "fanout-done", id: cmd.id, result: await runFanout(cmd) });
  } catch (e) {
    reply({ type: "failed", id: cmd.id, error: errorText(e) });
  }
});
process.on("disconnect", () => process.exit(0));
reply({ type: "ready", pid: process.pid });
