// People acting on runtimes with static bearer tokens: the console presents
// each person's users-file runtimeToken, refuses people without one, returns
// the runtime's own refusals as structured results, and (external runtime)
// lets an admin cancel with the initiator's credential.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HandoffOutcome, PolicyChoice, SessionKind, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { ERROR_EXPLANATIONS } from "@/lib/macp/constants";
import type { RunningRuntime } from "@/lib/runtime";
import { agent, newSessionId, startTestRuntime } from "./harness";
import { signedIn, startTestConsole, uuid, type Browser, type Person, type TestConsole } from "./actions-harness";

const TOKENS = [
  { token: "tok-alice", sender: "human:alice", can_manage_mode_registry: true },
  // Bob's runtime identity may only use task mode.
  { token: "tok-bob", sender: "human:bob", allowed_modes: ["macp.mode.task.v1"] },
  // Carol's token belongs to someone else.
  { token: "tok-mallory", sender: "human:mallory" },
  { token: "agent-bot", sender: "agent://bot" },
  { token: "ops-observer", sender: "ops:console", is_observer: true, can_start_sessions: false },
];
const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng", runtimeToken: "tok-alice" },
  { username: "bob", role: "operator", name: "Bob Ito", runtimeToken: "tok-bob" },
  { username: "carol", role: "approver", name: "Carol Lee", runtimeToken: "tok-mallory" },
  { username: "dave", role: "operator", name: "Dave Park" },
];

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to be refused");
}

function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

describe("embedded runtime with static tokens", () => {
  let tc: TestConsole;
  let alice: Browser;
  let bob: Browser;
  let carol: Browser;
  let dave: Browser;

  beforeAll(async () => {
    tc = await startTestConsole(PEOPLE, { MACP_AUTH_TOKENS_JSON: JSON.stringify(TOKENS), MACP_ALLOW_INSECURE: "1" });
    [alice, bob, carol, dave] = await Promise.all([
      signedIn(tc, "alice"),
      signedIn(tc, "bob"),
      signedIn(tc, "carol"),
      signedIn(tc, "dave"),
    ]);
  });
  afterAll(async () => {
    await tc?.close();
  });

  it("acts with each person's runtime token; the runtime's refusals come back as results with a plain explanation", async () => {
    const sid = ok(
      await alice.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.HANDOFF,
        intent: "tokens",
        scope: "pager",
        participants: ["human:bob", "human:carol"],
      }),
    ).sessionId;
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob" }));

    // decide() allows it (Bob is the target), but Bob's runtime identity may not use handoff mode.
    const accepted = await bob.actions().accept({ sessionId: sid, messageId: uuid() });
    expect(accepted).toMatchObject({ ok: false, code: "FORBIDDEN", explanation: ERROR_EXPLANATIONS.FORBIDDEN, sessionId: sid });
    expect(accepted.message).toContain("may not use mode");

    // Carol's token names another identity: the runtime refuses the sender.
    const mismatch = await carol
      .actions()
      .startSession({ messageId: uuid(), kind: SessionKind.TASK, intent: "x", participants: ["human:alice"] });
    expect(mismatch).toMatchObject({ ok: false, code: "UNAUTHENTICATED", explanation: ERROR_EXPLANATIONS.UNAUTHENTICATED });
  });

  it("refuses a person without a runtime token with a message saying what to do", async () => {
    const err = await refusal(
      dave.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:alice"] }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toContain("has no runtime token");
    expect(err.rawMessage).toContain('"runtimeToken" for dave');
  });

  it("registers an approval policy only with a runtime identity allowed to manage policies", async () => {
    const err = await refusal(
      bob.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.TASK,
        intent: "x",
        participants: ["human:alice"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
      }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toContain("did not let human:bob register");
    const r = ok(
      await alice.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.TASK,
        intent: "x",
        participants: ["human:bob"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
      }),
    );
    expect(r.policyId).toMatch(/^policy\.baton\.lead-approval\./);
    // Now that it exists, Bob's session reuses it without registering anything.
    ok(
      await bob.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.TASK,
        intent: "y",
        participants: ["human:alice"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
      }),
    );
  });
});

describe("external runtime", () => {
  let rt: RunningRuntime;
  let tc: TestConsole;

  beforeAll(async () => {
    rt = await startTestRuntime({ MACP_AUTH_TOKENS_JSON: JSON.stringify(TOKENS) });
    tc = await startTestConsole([...PEOPLE, { username: "root", role: "admin", name: "Root" }], {
      MACP_RUNTIME_URL: rt.url,
      MACP_RUNTIME_TOKEN: "ops-observer",
    });
  });
  afterAll(async () => {
    await tc?.close();
    await rt?.close();
  });

  it("lets an admin cancel a person's session with the initiator's credential, and explains when it has none", async () => {
    const alice = await signedIn(tc, "alice");
    const root = await signedIn(tc, "root");
    const sid = ok(
      await alice.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:bob"] }),
    ).sessionId;
    const cancelled = ok(await root.actions().cancel({ sessionId: sid, messageId: uuid(), reason: "cleanup" }));
    expect(cancelled.sessionState).toBe(SessionState.CANCELLED);
    expect(rt.kernel.getSession(sid)?.metadata.state).toBe(SessionState.CANCELLED);

    // A session an agent started: the console holds no credential for it.
    const botSession = newSessionId();
    // The harness agent sends "Bearer <identity>": here that is the bot's token.
    const bot = agent({ url: rt.url }, "agent-bot", botSession);
    expect((await bot.start(["agent://bot", "human:alice"])).ok).toBe(true);
    const err = await refusal(root.actions().cancel({ sessionId: botSession, messageId: uuid() }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toContain("no runtime credential for agent://bot");

    // Committing still goes through the person's own identity and decide().
    const sid2 = ok(
      await alice.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:bob"] }),
    ).sessionId;
    const commit = await refusal(alice.actions().commit({ sessionId: sid2, messageId: uuid(), outcome: HandoffOutcome.DECLINED }));
    expect(commit.code).toBe(Code.PermissionDenied);
  });
});
