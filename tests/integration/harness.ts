// Shared helpers for integration tests: start the real runtime on a loopback
// port and talk to it over real gRPC (h2c) with clients generated from proto/.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pino from "pino";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { MACPRuntimeService, type StreamSessionRequestSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { startRuntime, type RunningRuntime } from "@/lib/runtime";

type Frame = MessageInitShape<typeof StreamSessionRequestSchema>;
export type RuntimeClient = Client<typeof MACPRuntimeService>;
export type AuthStyle = "bearer" | "agent-id" | "none";

export function tempDir(prefix = "baton-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Start the runtime for a test. MACP_CLOSED_SESSION_CACHE from the test
 * process's environment is passed on, so a whole suite can run with a tiny
 * cache of closed sessions (the "no closed-session cache" vitest project),
 * where every read of a closed session goes to storage.
 */
export async function startTestRuntime(env: Record<string, string | undefined> = {}): Promise<RunningRuntime> {
  return startRuntime({
    env: {
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_ALLOW_INSECURE: "1",
      MACP_MEMORY_ONLY: "1",
      MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
      MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
      MACP_CLOSED_SESSION_CACHE: process.env.MACP_CLOSED_SESSION_CACHE,
      ...env,
    },
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
  });
}

export function authInterceptor(identity: string, style: AuthStyle): Interceptor {
  return (next) => (req) => {
    if (style === "bearer") req.header.set("authorization", `Bearer ${identity}`);
    else if (style === "agent-id") req.header.set("x-macp-agent-id", identity);
    return next(req);
  };
}

/** A client that authenticates as `identity` (dev mode) or with a token. */
export function clientFor(rt: { url: string }, identity: string, style: AuthStyle = "bearer"): RuntimeClient {
  const transport = createGrpcTransport({
    baseUrl: rt.url,
    interceptors: style === "none" ? [] : [authInterceptor(identity, style)],
  });
  return createClient(MACPRuntimeService, transport);
}

/** Async queue of request frames for a bidirectional StreamSession. */
export class FrameQueue implements AsyncIterable<Frame> {
  private items: Frame[] = [];
  private wake: (() => void) | null = null;
  private done = false;
  push(f: Frame) {
    this.items.push(f);
    this.wake?.();
  }
  end() {
    this.done = true;
    this.wake?.();
  }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      const f = this.items.shift();
      if (f) {
        yield f;
        continue;
      }
      if (this.done) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = null;
    }
  }
}

/**
 * Passive-subscribe to a session and collect envelopes until `count` have
 * arrived (or the timeout passes), then close the stream.
 */
export async function collectEnvelopes(
  client: RuntimeClient,
  sessionId: string,
  count: number,
  opts: { afterSequence?: number; timeoutMs?: number } = {},
): Promise<Envelope[]> {
  const frames = new FrameQueue();
  frames.push({ subscribeSessionId: sessionId, afterSequence: BigInt(opts.afterSequence ?? 0) });
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 5_000);
  const out: Envelope[] = [];
  try {
    for await (const res of client.streamSession(frames, { signal: ac.signal })) {
      if (res.response.case === "envelope") out.push(res.response.value);
      if (res.response.case === "error") throw new Error(`inline error ${res.response.value.code}`);
      if (out.length >= count) break;
    }
  } catch (e) {
    if (!ac.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
    frames.end();
    ac.abort();
  }
  return out;
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

import { buildEnvelope } from "@/lib/macp/payloads";
import { newSessionId } from "@/lib/macp/ids";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION } from "@/lib/macp/constants";

/** A small scripted agent: sends envelopes of one session as `sender`. */
export function agent(rt: { url: string }, sender: string, sessionId: string, mode = HANDOFF_MODE, style: AuthStyle = "bearer") {
  const client = clientFor(rt, sender, style);
  return {
    client,
    async send(messageType: string, payload: Record<string, unknown>, extra: { messageId?: string; timestampMs?: number } = {}) {
      const env = buildEnvelope({ mode, messageType, sessionId, payload, ...extra });
      const res = await client.send({ envelope: env });
      if (!res.ack) throw new Error("no ack");
      return res.ack;
    },
    start(
      participants: string[],
      opts: { ttlMs?: number; policy?: string; intent?: string; messageId?: string; timestampMs?: number } = {},
    ) {
      return this.send(
        "SessionStart",
        {
          intent: opts.intent ?? "test",
          participants,
          modeVersion: MODE_VERSION,
          configurationVersion: DEFAULT_CONFIGURATION_VERSION,
          policyVersion: opts.policy ?? "",
          ttlMs: BigInt(opts.ttlMs ?? 60_000),
        },
        { messageId: opts.messageId, timestampMs: opts.timestampMs },
      );
    },
    commit(action: string, outcomePositive: boolean, opts: { policy?: string; timestampMs?: number; messageId?: string } = {}) {
      return this.send(
        "Commitment",
        {
          commitmentId: `c-${Math.random().toString(36).slice(2)}`,
          action,
          authorityScope: "test",
          reason: `${action} by ${sender}`,
          modeVersion: MODE_VERSION,
          configurationVersion: DEFAULT_CONFIGURATION_VERSION,
          policyVersion: opts.policy ?? DEFAULT_POLICY_ID,
          outcomePositive,
        },
        { timestampMs: opts.timestampMs, messageId: opts.messageId },
      );
    },
  };
}

export { newSessionId };
