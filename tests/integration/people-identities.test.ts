// People cannot be impersonated from the same machine (issue 10, item 8). In
// dev mode the embedded runtime believes the id a dev header names; the
// participant ids of the console's people are reserved, so only the console
// acts for them. Agents keep the dev headers the official SDKs send. The real
// console server and embedded runtime (dev auth), a real gRPC client playing
// a local process.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPeople, signedIn, startTestConsole, uuid, type TestConsole } from "./actions-harness";
import { SessionKind } from "@/lib/gen/baton/v1/actions_pb";
import { agent, clientFor, collectEnvelopes, newSessionId, waitFor, type AuthStyle } from "./harness";

let tc: TestConsole;
let rt: { url: string };

beforeAll(async () => {
  tc = await startTestConsole([
    { username: "alice", role: "operator", name: "Alice Ng" },
    { username: "bob", role: "operator", name: "Bob Ito" },
  ]);
  if (!tc.console.runtime) throw new Error("no embedded runtime");
  rt = { url: tc.console.runtime.url };
});

afterAll(async () => {
  await tc?.close();
});

const STYLES: AuthStyle[] = ["bearer", "agent-id"];

async function refusedStream(id: string, style: AuthStyle, sessionId: string): Promise<ConnectError> {
  try {
    await collectEnvelopes(clientFor(rt, id, style), sessionId, 1, { timeoutMs: 2_000 });
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error(`StreamSession as ${id} was not refused`);
}

describe("dev headers naming a person of the console", () => {
  it("are refused for sending, whichever header names them; the same headers still work for agents", async () => {
    const sid = newSessionId();
    for (const style of STYLES) {
      for (const person of ["human:alice", "human:bob", "oidc:3f2a9c"]) {
        const ack = await agent(rt, person, sid, undefined, style).start([person, "agent://helper"]);
        expect(ack.ok, `${person} via ${style}`).toBe(false);
        expect(ack.error?.code).toBe("UNAUTHENTICATED");
      }
    }
    // x-macp-token (the other dev spelling) too.
    const viaToken = await clientFor(rt, "", "none")
      .listSessions({}, { headers: { "x-macp-token": "human:alice" } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(viaToken instanceof ConnectError && viaToken.code).toBe(Code.Unauthenticated);
    expect(viaToken instanceof ConnectError && viaToken.rawMessage).toMatch(/human:alice is a person of the Baton console/);

    const agentSid = newSessionId();
    for (const style of STYLES) {
      const ack = await agent(rt, `agent://ops-${style}`, style === "bearer" ? agentSid : newSessionId(), undefined, style).start([
        `agent://ops-${style}`,
        "human:alice",
      ]);
      expect(ack.ok, `agent via ${style}: ${ack.error?.message}`).toBe(true);
    }
  });

  it("are refused for reading as them too (StreamSession)", async () => {
    const sid = newSessionId();
    expect((await agent(rt, "agent://owner", sid).start(["agent://owner", "human:alice"])).ok).toBe(true);
    for (const style of STYLES) expect((await refusedStream("human:alice", style, sid)).code).toBe(Code.Unauthenticated);
    // The agent reads its own session.
    expect(await collectEnvelopes(clientFor(rt, "agent://owner"), sid, 1)).toHaveLength(1);
  });

  it("cannot answer an offer made to a person: only that person, signed in to the console, can", async () => {
    const sid = newSessionId();
    const owner = agent(rt, "agent://oncall", sid);
    expect((await owner.start(["agent://oncall", "human:bob"])).ok).toBe(true);
    expect((await owner.send("HandoffOffer", { handoffId: "h1", targetParticipant: "human:bob", scope: "pager" })).ok).toBe(true);
    const forged = await agent(rt, "human:bob", sid).send("HandoffAccept", { handoffId: "h1", acceptedBy: "human:bob" });
    expect(forged.ok).toBe(false);
    expect(forged.error?.code).toBe("UNAUTHENTICATED");
    const bob = await signedIn(tc, "bob");
    const accepted = await bob.actions().accept({ sessionId: sid, messageId: uuid(), handoffId: "h1" });
    expect(accepted.ok, accepted.message).toBe(true);
    const history = await collectEnvelopes(clientFor(rt, "baton:console"), sid, 3);
    expect(history.map((e) => [e.messageType, e.sender])).toEqual([
      ["SessionStart", "agent://oncall"],
      ["HandoffOffer", "agent://oncall"],
      ["HandoffAccept", "human:bob"],
    ]);
  });

  it("covers people added while the console runs, within a few seconds", async () => {
    const sid = newSessionId();
    // Not a person yet: an agent may use the id.
    const before = await agent(rt, "human:carol", sid).start(["human:carol", "agent://x"]);
    expect(before.ok, before.error?.message).toBe(true);
    await addPeople(tc.usersFile, [{ username: "carol", role: "operator", name: "Carol Lee" }]);
    await waitFor(
      async () => !(await agent(rt, "human:carol", newSessionId()).start(["human:carol", "agent://x"])).ok,
      5_000,
      "human:carol to be reserved",
    );
    // And the console acts for her.
    const carol = await signedIn(tc, "carol");
    const started = await carol
      .actions()
      .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "carol's rotation", participants: ["human:alice"] });
    expect(started.ok, started.message).toBe(true);
  });
});
