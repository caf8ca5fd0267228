// Every demo scenario, played by the generic player at instant speed against
// the real runtime, then checked from the runtime's point of view: session
// state, commitment (action, outcome_positive, sender) and mode state from
// the projections folded over the subscribed history.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HandoffSession, MacpClient, Auth } from "@/lib/agent";
import { DemoPlayer, type ScenarioResult, type SessionOutcome } from "@/lib/demo/player";
import { SCENARIOS, findScenario } from "@/lib/demo/scenarios";
import { IMPLICIT_ACCEPT_POLICY } from "@/lib/demo/scenarios/implicit-accept";
import { LEAD_APPROVAL_POLICY } from "@/lib/demo/scenarios/lead-approval";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import { viewFromEvents } from "@/lib/macp/projections/session";
import type { RunningRuntime } from "@/lib/runtime";
import { startTestRuntime } from "./harness";

let rt: RunningRuntime;
const lines: string[] = [];

beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => {
  await rt?.close();
});

async function play(name: string, extra: Partial<ConstructorParameters<typeof DemoPlayer>[0]> = {}): Promise<ScenarioResult> {
  const scenario = findScenario(name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  const player = new DemoPlayer({ address: rt.address, speed: "instant", log: (l) => lines.push(l), ...extra });
  try {
    return await player.play(scenario);
  } finally {
    player.close();
  }
}

function session(r: ScenarioResult, alias = "main"): SessionOutcome {
  const s = r.sessions[alias];
  if (!s) throw new Error(`scenario ${r.scenario.name} has no session ${alias}`);
  return s;
}

const types = (s: SessionOutcome) => s.events.map((e) => e.envelope.messageType);
const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

/** Scenario-specific checks of the mode state, on top of the scenario's own expectations. */
const CHECKS: Record<string, (r: ScenarioResult) => void> = {
  "oncall-rotation": (r) => {
    const s = session(r);
    expect(types(s)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext", "HandoffContext", "HandoffAccept", "Commitment"]);
    const h = s.handoff;
    expect(h?.isAccepted("h1")).toBe(true);
    expect(h?.getHandoff("h1")).toMatchObject({
      target: "agent://oncall/bob",
      acceptedBy: "agent://oncall/bob",
      scope: "payments-api primary on-call",
    });
    const ctx = h?.getHandoff("h1")?.contexts ?? [];
    expect(ctx.map((c) => c.contentType)).toEqual(["text/markdown", "application/json"]);
    expect(text(ctx[0]?.context)).toMatch(/^# Payments API — primary on-call runbook\n/);
    expect(text(ctx[0]?.context)).toMatch(/^## Escalation$/m);
    expect(JSON.parse(text(ctx[1]?.context))).toMatchObject({ openIncidents: ["INC-4790"] });
    expect(viewFromEvents(s.events).currentOwner).toBe("agent://oncall/bob");
  },
  "decline-reoffer": (r) => {
    const h = session(r).handoff;
    expect(h?.offers.map((o) => [o.handoffId, o.target, o.status])).toEqual([
      ["h1", "agent://oncall/bob", "declined"],
      ["h2", "agent://oncall/carol", "accepted"],
    ]);
    expect(h?.isDeclined("h1")).toBe(true);
    expect(h?.isAccepted("h2")).toBe(true);
    expect(h?.getHandoff("h1")?.responseReason).toMatch(/travelling/);
    expect(h?.getHandoff("h2")?.contexts).toHaveLength(1);
    expect(h?.pendingHandoffs()).toEqual([]);
  },
  "escalation-human": (r) => {
    const s = session(r);
    expect(s.metadata.contextId).toBe("INC-4821");
    expect(s.handoff?.getHandoff("h1")).toMatchObject({ status: "accepted", acceptedBy: "human://oncall/dana" });
    expect(text(s.handoff?.getHandoff("h1")?.contexts[0]?.context)).toMatch(/^# Escalation: INC-4821/);
    expect(r.steps.find((st) => st.actor === "human://oncall/dana")?.answeredBy).toBeUndefined();
  },
  "implicit-accept": (r) => {
    const s = session(r);
    expect(s.metadata.policyVersion).toBe(IMPLICIT_ACCEPT_POLICY);
    expect(r.steps.map((st) => st.result)).toEqual(["ok", "ok", "ok", "INVALID_ENVELOPE", "ok", "ok"]);
    // Reference behaviour (D7): the implicit accept is evaluated at commitment
    // time and never appears in the history, so the projection still shows
    // the offer unanswered while the session is resolved positively.
    expect(types(s)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext", "Commitment"]);
    expect(s.handoff?.getHandoff("h1")?.status).toBe("context_sent");
    const offerTs = Number(s.events[1]?.envelope.timestampUnixMs);
    const commitTs = Number(s.events[3]?.envelope.timestampUnixMs);
    expect(commitTs - offerTs).toBeGreaterThanOrEqual(120_000);
  },
  "lead-approval": (r) => {
    const s = session(r);
    expect(s.metadata.policyVersion).toBe(LEAD_APPROVAL_POLICY);
    const refused = r.steps.find((st) => st.result !== "ok");
    expect(refused).toMatchObject({ actor: "agent://dba/alice", action: "commit", result: "FORBIDDEN", matched: true });
    expect(s.handoff?.isAccepted("h1")).toBe(true);
    expect(s.commitment).toMatchObject({
      sender: "human://sre-lead/erin",
      authorityScope: "sre-lead approval",
      policyVersion: LEAD_APPROVAL_POLICY,
    });
    // The refused commitment left no trace.
    expect(s.events.filter((e) => e.envelope.messageType === "Commitment")).toHaveLength(1);
  },
  "task-progress": (r) => {
    const t = session(r).task;
    expect(t?.task).toMatchObject({ taskId: "backfill-2025-03", requestedAssignee: "agent://billing/worker-7", status: "completed" });
    expect(t?.activeAssignee()).toBe("agent://billing/worker-7");
    expect(t?.task?.updates.map((u) => u.progress)).toEqual([0.3, 0.7]);
    expect(t?.latestProgress()).toBe(1);
    expect(t?.isCompleted()).toBe(true);
    const report = t?.terminalReport();
    expect(report?.kind).toBe("complete");
    if (report?.kind === "complete") {
      expect(report.summary).toMatch(/13,200 invoices/);
      expect(JSON.parse(text(report.output))).toMatchObject({ invoices: 13200, changed: 312 });
    }
    expect(JSON.parse(text(t?.task?.input))).toMatchObject({ month: "2025-03" });
  },
  "task-retry": (r) => {
    const first = session(r, "first");
    const retry = session(r, "retry");
    expect(first.sessionId).not.toBe(retry.sessionId);
    expect(first.task?.isFailed()).toBe(true);
    expect(first.task?.isRetryable()).toBe(true);
    expect(first.task?.latestProgress()).toBe(0.4);
    expect(first.task?.terminalReport()).toMatchObject({ kind: "fail", errorCode: "UPSTREAM_TIMEOUT", retryable: true });
    expect(retry.task?.isCompleted()).toBe(true);
    expect(retry.task?.activeAssignee()).toBe("agent://billing/worker-9");
    // The retry points back at the failed session, by its fresh id.
    expect(viewFromEvents(retry.events).intent).toBe(`Retry of ${first.sessionId}: export Q1 ledger`);
    expect(JSON.parse(text(retry.task?.task?.input))).toEqual({ previousSession: first.sessionId });
  },
  "forbidden-sender": (r) => {
    const s = session(r);
    expect(r.steps.filter((st) => st.result === "FORBIDDEN").map((st) => [st.actor, st.action])).toEqual([
      ["agent://oncall/carol", "accept"],
      ["agent://oncall/bob", "commit"],
    ]);
    expect(s.events.some((e) => e.envelope.sender === "agent://oncall/carol")).toBe(false);
    expect(types(s)).toEqual(["SessionStart", "HandoffOffer", "HandoffAccept", "Commitment"]);
    expect(s.handoff?.getHandoff("h1")?.acceptedBy).toBe("agent://oncall/bob");
  },
};

describe("demo scenarios", () => {
  it("every scenario has specific checks here", () => {
    expect(Object.keys(CHECKS).sort()).toEqual(SCENARIOS.map((s) => s.name).sort());
  });

  it.each(SCENARIOS.map((s) => [s.name]))("%s plays as scripted and ends in the expected state", async (name) => {
    const r = await play(name);
    expect(r.problems).toEqual([]);
    expect(r.passed).toBe(true);
    expect(r.steps.every((st) => st.matched)).toBe(true);
    for (const [alias, want] of Object.entries(r.scenario.expect)) {
      const s = session(r, alias);
      expect(s.state).toBe(want.state);
      expect(s.handoff?.phase ?? s.task?.phase).toBe(want.phase);
      expect(s.commitment?.action).toBe(want.action);
      expect(s.commitment?.outcomePositive).toBe(want.outcomePositive);
      if (want.committedBy) expect(s.commitment?.sender).toBe(want.committedBy);
      // History is numbered 1..n and starts with the SessionStart.
      expect(s.events.map((e) => e.sequence)).toEqual(s.events.map((_, i) => i + 1));
      expect(s.events[0]?.envelope.messageType).toBe("SessionStart");
      // The commitment's outcome_positive is explicit on the wire (false survives decoding).
      const last = s.events[s.events.length - 1]?.envelope;
      expect(decodePayloadToJson(last?.mode ?? "", "Commitment", last?.payload ?? new Uint8Array())?.outcome_positive).toBe(
        want.outcomePositive,
      );
    }
    CHECKS[name]?.(r);
  });

  it("uses fresh session ids on every run, and re-registering an identical policy is fine", async () => {
    const a = await play("lead-approval");
    const b = await play("lead-approval");
    expect(a.passed && b.passed).toBe(true);
    expect(session(a).sessionId).not.toBe(session(b).sessionId);
    expect(lines.some((l) => l.includes(`policy ${LEAD_APPROVAL_POLICY} is already registered with the same rules`))).toBe(true);
  });

  it("narrates each step and the refusals with their codes and explanations", async () => {
    const out: string[] = [];
    await play("forbidden-sender", { log: (l) => out.push(l) });
    const log = out.join("\n");
    expect(log).toMatch(/A message from the wrong sender is refused/);
    expect(log).toMatch(/refused as expected: FORBIDDEN: This participant is not allowed/);
    expect(log).toMatch(/PASS/);
  });
});

describe("interactive human step", () => {
  it("waits for the person and follows their answer (a decline)", async () => {
    const dana = new MacpClient({ address: rt.address, auth: Auth.devAgent("human://oncall/dana") });
    let prompted = "";
    try {
      const r = await play("escalation-human", {
        interactive: true,
        onHumanPrompt: ({ sessionId, handoffId, actor }) => {
          prompted = actor;
          void new HandoffSession(dana, { sessionId }).decline({ handoffId, reason: "not my area, page payments" });
        },
      });
      expect(prompted).toBe("human://oncall/dana");
      expect(r.passed).toBe(true);
      const s = session(r);
      expect(s.deviated).toBe(true);
      expect(r.steps.find((st) => st.actor === "human://oncall/dana")?.answeredBy).toBe("human");
      expect(s.handoff?.isDeclined("h1")).toBe(true);
      expect(s.commitment).toMatchObject({ action: "handoff.declined", outcomePositive: false, sender: "agent://support/tier1-bot" });
    } finally {
      dana.close();
    }
  });

  it("plays the scripted answer when nobody answers in time", async () => {
    const r = await play("escalation-human", { interactive: true, humanTimeoutMs: 150 });
    expect(r.passed).toBe(true);
    expect(r.steps.find((st) => st.actor === "human://oncall/dana")?.answeredBy).toBe("script");
    expect(session(r).commitment).toMatchObject({ action: "handoff.accepted", outcomePositive: true });
  });
});

describe("player failures", () => {
  it("reports a scenario that does not go as scripted", async () => {
    const base = findScenario("forbidden-sender");
    if (!base) throw new Error("missing");
    const broken = {
      ...base,
      name: "broken",
      // Carol's accept is now expected to succeed, which the runtime refuses.
      steps: base.steps.map((st) => (st.actor === "agent://oncall/carol" ? { ...st, expect: "ok" as const } : st)),
    };
    const player = new DemoPlayer({ address: rt.address, speed: "instant", log: () => undefined });
    try {
      const r = await player.play(broken);
      expect(r.passed).toBe(false);
      expect(r.problems[0]).toMatch(/step 3 \(carol accept\): expected acceptance, got FORBIDDEN/);
      expect(session(r).state).toBe("OPEN");
    } finally {
      player.close();
    }
  });
});
