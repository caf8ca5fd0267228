// What the browser console needs besides the actions: a bound policy's rules
// for decide() (GetPolicy), the upload limit and admins' demo scenarios
// (GetCapabilities), and admins' "Run demo" (RunDemo) playing a scenario
// server-side against the embedded runtime, refused for everyone else.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DemoControlAction, PolicyChoice, SessionKind, type RunDemoResponse } from "@/lib/gen/baton/v1/actions_pb";
import { summarizePolicyRules } from "@/lib/authz/policy-summary";
import { Browser, signedIn, startTestConsole, uuid, type TestConsole } from "./actions-harness";

let tc: TestConsole;
let alice: Browser;
let carol: Browser;
let victor: Browser;
let root: Browser;

beforeAll(async () => {
  tc = await startTestConsole([
    { username: "alice", role: "operator", name: "Alice Ng" },
    { username: "carol", role: "approver", name: "Carol Lee" },
    { username: "victor", role: "viewer", name: "Victor Viewer" },
    { username: "root", role: "admin", name: "Ruth Admin" },
  ]);
  [alice, carol, victor, root] = await Promise.all([
    signedIn(tc, "alice"),
    signedIn(tc, "carol"),
    signedIn(tc, "victor"),
    signedIn(tc, "root"),
  ]);
});

afterAll(async () => {
  await tc?.close();
});

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to be refused");
}

async function drain(stream: AsyncIterable<RunDemoResponse>): Promise<RunDemoResponse[]> {
  const out: RunDemoResponse[] = [];
  for await (const m of stream) out.push(m);
  return out;
}

describe("GetPolicy", () => {
  it("gives any signed-in person the rules of a session's policy", async () => {
    const started = await alice.actions().startSession({
      messageId: uuid(),
      kind: SessionKind.HANDOFF,
      intent: "payments on-call (lead approval)",
      participants: ["human:carol"],
      policy: PolicyChoice.LEAD_APPROVAL,
      approvers: ["human:carol"],
    });
    expect(started.ok).toBe(true);
    const policy = await victor.actions().getPolicy({ policyId: started.policyId });
    expect(policy).toMatchObject({ found: true, policyId: started.policyId, mode: "macp.mode.handoff.v1" });
    const summary = summarizePolicyRules(policy.rulesJson);
    expect(summary.commitment).toEqual({ authority: "designated_role", designatedRoles: ["human:carol"] });

    expect(await victor.actions().getPolicy({ policyId: "policy.nobody-registered-this" })).toMatchObject({ found: false, rulesJson: "" });
    expect((await refusal(victor.actions().getPolicy({ policyId: "bad id with spaces" }))).code).toBe(Code.InvalidArgument);
    expect((await refusal(new Browser(tc.url).actions().getPolicy({ policyId: started.policyId }))).code).toBe(Code.Unauthenticated);
  });
});

describe("GetCapabilities", () => {
  it("tells everyone the upload limit and only admins the demo scenarios", async () => {
    const forViewer = await victor.actions().getCapabilities({});
    expect(forViewer.maxPayloadBytes).toBeGreaterThan(1000);
    expect(forViewer.demoScenarios).toEqual([]);
    expect(forViewer.demoAvailable).toBe(false);
    const forAdmin = await root.actions().getCapabilities({});
    expect(forAdmin.demoAvailable).toBe(true);
    expect(forAdmin.demoScenarios.map((s) => s.name)).toContain("lead-approval");
    expect(forAdmin.demoScenarios.every((s) => s.title !== "" && s.steps > 0)).toBe(true);
  });
});

describe("RunDemo", () => {
  it("plays a scenario for an admin, streaming narration and the sessions it starts", async () => {
    const messages = await drain(root.actions().runDemo({ scenario: "lead-approval", instant: true }));
    const lines = messages.flatMap((m) => (m.item.case === "line" ? [m.item.value] : []));
    const sessions = messages.flatMap((m) => (m.item.case === "session" ? [m.item.value] : []));
    const finished = messages.find((m) => m.item.case === "finished")?.item;
    expect(lines.join("\n")).toContain("lead-approval");
    expect(sessions).toHaveLength(1);
    expect(sessions[0]?.alias).toBe("main");
    expect(finished?.case === "finished" && finished.value.passed).toBe(true);
    // The session is real: anyone signed in can read it.
    const summary = await victor.console().getSessionSummary({ sessionId: sessions[0]?.sessionId ?? "" });
    expect(summary.summary?.phase).toBe("Committed");
  });

  it("starts paused, plays exactly one step per Step, resumes, and reports the refused step (FORBIDDEN) with what the runtime said", async () => {
    const messages: RunDemoResponse[] = [];
    const ac = new AbortController();
    const reading = (async () => {
      for await (const m of root.actions().runDemo({ scenario: "lead-approval", instant: true, startPaused: true }, { signal: ac.signal }))
        messages.push(m);
    })();
    const until = async (what: string, ok: () => boolean): Promise<void> => {
      const end = Date.now() + 10_000;
      while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const steps = () => messages.flatMap((m) => (m.item.case === "step" ? [m.item.value] : []));
    await until("the run id", () => messages.some((m) => m.item.case === "started"));
    const started = messages.find((m) => m.item.case === "started")?.item;
    const runId = started?.case === "started" ? started.value.runId : "";
    expect(started?.case === "started" && started.value.steps).toBe(6);
    // Paused before the first step: nothing is played while nobody steps.
    await new Promise((r) => setTimeout(r, 300));
    expect(steps()).toHaveLength(0);
    for (let n = 1; n <= 2; n++) {
      const res = await root.actions().controlDemo({ runId, action: DemoControlAction.STEP });
      expect(res.state?.paused).toBe(true);
      await until(`step ${n}`, () => steps().length === n);
      await new Promise((r) => setTimeout(r, 200));
      expect(steps()).toHaveLength(n);
    }
    // Only admins steer, behind CSRF; a step while playing is refused; a pace is checked.
    expect((await refusal(alice.actions().controlDemo({ runId, action: DemoControlAction.PAUSE }))).code).toBe(Code.PermissionDenied);
    expect((await refusal(root.actions().controlDemo({ runId, action: DemoControlAction.SET_PACE, speed: 500 }))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await refusal(root.actions().controlDemo({ runId: "no-such-run", action: DemoControlAction.STEP }))).code).toBe(Code.NotFound);
    expect((await root.actions().controlDemo({ runId, action: DemoControlAction.RESUME })).state?.paused).toBe(false);
    await until("the end", () => messages.some((m) => m.item.case === "finished"));
    await reading;
    expect((await refusal(root.actions().controlDemo({ runId, action: DemoControlAction.PAUSE }))).code).toBe(Code.NotFound);
    const all = steps();
    expect(all.map((s) => s.result)).toEqual(["ok", "ok", "ok", "ok", "FORBIDDEN", "ok"]);
    const refused = all[4];
    expect(refused).toMatchObject({ index: 5, action: "commit", actor: "agent://dba/alice", asExpected: true });
    expect(refused?.runtimeMessage).not.toBe("");
    expect(refused?.explanation).not.toBe("");
    const finished = messages.find((m) => m.item.case === "finished")?.item;
    expect(finished?.case === "finished" && finished.value.passed).toBe(true);
  });

  it("is refused for non-admins, without CSRF, and for unknown scenarios or speeds", async () => {
    for (const who of [alice, carol, victor]) {
      expect((await refusal(drain(who.actions().runDemo({ scenario: "lead-approval", instant: true })))).code).toBe(Code.PermissionDenied);
    }
    expect((await refusal(drain(new Browser(tc.url).actions().runDemo({ scenario: "lead-approval" })))).code).toBe(Code.Unauthenticated);
    const noCsrf = await signedIn(tc, "root");
    noCsrf.csrfOverride = "";
    const refused = await refusal(drain(noCsrf.actions().runDemo({ scenario: "lead-approval", instant: true })));
    expect(refused.code).toBe(Code.PermissionDenied);
    expect(refused.rawMessage).toMatch(/CSRF/);
    expect((await refusal(drain(root.actions().runDemo({ scenario: "no-such-demo" })))).code).toBe(Code.InvalidArgument);
    expect((await refusal(drain(root.actions().runDemo({ scenario: "lead-approval", speed: 500 })))).code).toBe(Code.InvalidArgument);
  });
});
