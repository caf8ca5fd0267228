// A scripted MACP agent for the e2e suite: a real gRPC client to the runtime
// (createGrpcTransport over HTTP/2), the dev auth header naming the caller,
// and envelopes built with lib/macp/payloads. Every Send must be accepted.

import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { MACPRuntimeService } from "@/lib/gen/macp/v1/core_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";
import { currentApp } from "./apps";

/** The embedded runtime of the app under test (the running test's: e2e/support/apps.ts). */
export function runtimeUrl(): string {
  return `http://${currentApp().runtimeAddr}`;
}

type Runtime = Client<typeof MACPRuntimeService>;
const clients = new Map<string, Runtime>();

function runtime(): Runtime {
  const url = runtimeUrl();
  let client = clients.get(url);
  if (!client) {
    client = createClient(MACPRuntimeService, createGrpcTransport({ baseUrl: url }));
    clients.set(url, client);
  }
  return client;
}

export function newSessionId(): string {
  return globalThis.crypto.randomUUID();
}

/** One participant acting under its own identity. */
export class Agent {
  constructor(readonly id: string) {}

  async send(sessionId: string, mode: string, messageType: string, payload: PayloadInput): Promise<void> {
    const envelope = buildEnvelope({ mode, messageType, sessionId, sender: this.id, payload });
    const res = await runtime().send({ envelope }, { headers: { authorization: `Bearer ${this.id}` } });
    const ack = res.ack;
    if (!ack?.ok) {
      throw new Error(`${this.id} ${messageType} rejected: ${ack?.error?.code ?? "?"} ${ack?.error?.message ?? ""}`);
    }
  }

  start(sessionId: string, mode: string, intent: string, participants: string[], ttlMs = 15 * 60_000): Promise<void> {
    return this.send(sessionId, mode, "SessionStart", {
      intent,
      participants,
      modeVersion: "1.0.0",
      configurationVersion: "config.default",
      ttlMs: BigInt(ttlMs),
    });
  }

  // Handoff
  offer(sessionId: string, handoffId: string, target: string, scope: string, reason: string): Promise<void> {
    return this.send(sessionId, HANDOFF_MODE, "HandoffOffer", { handoffId, targetParticipant: target, scope, reason });
  }
  context(sessionId: string, handoffId: string, contentType: string, text: string): Promise<void> {
    return this.send(sessionId, HANDOFF_MODE, "HandoffContext", {
      handoffId,
      contentType,
      context: new TextEncoder().encode(text),
    });
  }
  acceptHandoff(sessionId: string, handoffId: string, reason: string): Promise<void> {
    return this.send(sessionId, HANDOFF_MODE, "HandoffAccept", { handoffId, acceptedBy: this.id, reason });
  }
  declineHandoff(sessionId: string, handoffId: string, reason: string): Promise<void> {
    return this.send(sessionId, HANDOFF_MODE, "HandoffDecline", { handoffId, declinedBy: this.id, reason });
  }

  // Task
  request(sessionId: string, taskId: string, title: string, assignee: string, instructions: string): Promise<void> {
    return this.send(sessionId, TASK_MODE, "TaskRequest", { taskId, title, requestedAssignee: assignee, instructions });
  }
  acceptTask(sessionId: string, taskId: string): Promise<void> {
    return this.send(sessionId, TASK_MODE, "TaskAccept", { taskId, assignee: this.id, reason: "on it" });
  }
  update(sessionId: string, taskId: string, progress: number, message: string): Promise<void> {
    return this.send(sessionId, TASK_MODE, "TaskUpdate", { taskId, status: "working", progress, message });
  }
  complete(sessionId: string, taskId: string, summary: string, output: unknown): Promise<void> {
    return this.send(sessionId, TASK_MODE, "TaskComplete", {
      taskId,
      assignee: this.id,
      summary,
      output: new TextEncoder().encode(JSON.stringify(output)),
    });
  }

  commit(sessionId: string, mode: string, action: string, positive: boolean, reason: string): Promise<void> {
    return this.send(sessionId, mode, "Commitment", {
      commitmentId: globalThis.crypto.randomUUID(),
      action,
      authorityScope: mode === HANDOFF_MODE ? "handoff" : "task",
      reason,
      modeVersion: "1.0.0",
      policyVersion: "policy.default",
      configurationVersion: "config.default",
      outcomePositive: positive,
    });
  }
}
