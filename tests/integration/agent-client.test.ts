// The agent layer (lib/agent) against the real runtime on loopback: MacpClient basics, error
// surfacing, the control plane (policies) and context files.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  Auth,
  buildHandoffPolicy,
  contentTypeFor,
  HandoffSession,
  type MacpAckError,
  MacpClient,
  MacpUsageError,
  readContextFile,
  runtimeBaseUrl,
} from "@/lib/agent";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { tempDir } from "./harness";
import { clientAs, clients, OWNER, rejection, rt, TARGET, useAgentRuntime } from "./__fixtures__/agent-kit";

useAgentRuntime();

describe("MacpClient basics", () => {
  it("normalises runtime addresses", () => {
    expect(runtimeBaseUrl("127.0.0.1:50051")).toBe("http://127.0.0.1:50051");
    expect(runtimeBaseUrl("127.0.0.1:50051", true)).toBe("https://127.0.0.1:50051");
    expect(runtimeBaseUrl("localhost")).toBe("http://localhost:50051");
    expect(runtimeBaseUrl("http://[::1]:7000/")).toBe("http://[::1]:7000");
    expect(runtimeBaseUrl("http://rt:7000", true)).toBe("https://rt:7000");
    expect(runtimeBaseUrl("grpcs://rt.example")).toBe("https://rt.example");
    expect(runtimeBaseUrl("rt.example", true)).toBe("https://rt.example:50051");
    expect(() => runtimeBaseUrl("ftp://x:1")).toThrow(MacpUsageError);
  });

  it("initializes and discovers the modes", async () => {
    const c = clientAs(OWNER);
    const res = await c.initialize();
    expect(res.selectedProtocolVersion).toBe("1.0");
    expect(c.selectedProtocolVersion).toBe("1.0");
    expect(res.supportedModes).toEqual(expect.arrayContaining(["macp.mode.handoff.v1", "macp.mode.task.v1"]));
    expect((await c.listModes()).map((m) => m.mode)).toContain("macp.mode.handoff.v1");
  });

  it("keeps transport failures as ConnectError (unreachable runtime)", async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const c = new MacpClient({ address: `127.0.0.1:${port}`, auth: Auth.devAgent(OWNER), retry: { attempts: 2, backoffMs: 10 } });
    try {
      const err = await rejection(c.listSessions());
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unavailable);
    } finally {
      c.close();
    }
  });

  it("surfaces a missing credential as ConnectError Unauthenticated", async () => {
    const anon = new MacpClient({ address: rt.address });
    clients.push(anon);
    const err = await rejection(anon.listSessions());
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });
});

describe("policies", () => {
  it("registers, reads and lists a policy; a second registration is refused with a reason", async () => {
    const c = clientAs("agent://admin");
    const policy = buildHandoffPolicy({
      policyId: "policy.agenttest.lead",
      description: "lead approves",
      commitment: { authority: "designated_role", designatedRoles: ["agent://lead"] },
    });
    expect(await c.registerPolicy(policy)).toEqual({ ok: true, error: "" });
    const again = await c.registerPolicy(policy);
    expect(again.ok).toBe(false);
    expect(again.error).toMatch(/already registered/);
    const got = await c.getPolicy("policy.agenttest.lead");
    expect(JSON.parse(got.rules)).toEqual({ commitment: { authority: "designated_role", designated_roles: ["agent://lead"] } });
    expect((await c.listPolicies("macp.mode.handoff.v1")).map((p) => p.policyId)).toContain("policy.agenttest.lead");
    const missing = await rejection(c.getPolicy("policy.nope"));
    expect((missing as ConnectError).code).toBe(Code.NotFound);

    // Sessions bound to it: the owner may not commit, the lead may.
    const owner = new HandoffSession(clientAs(OWNER), { policyVersion: "policy.agenttest.lead" });
    await owner.start({ intent: "needs approval", participants: [OWNER, TARGET, "agent://lead"], ttlMs: 60_000 });
    await owner.offer({ targetParticipant: TARGET });
    await new HandoffSession(clientAs(TARGET), { sessionId: owner.sessionId }).acceptHandoff({ handoffId: "h1" });
    const denied = await rejection(owner.commit({ action: "handoff.accepted", reason: "r" }));
    expect((denied as MacpAckError).code).toBe("FORBIDDEN");
    const lead = await HandoffSession.attach(clientAs("agent://lead"), owner.sessionId);
    expect(lead.policyVersion).toBe("policy.agenttest.lead");
    expect((await lead.commit({ action: "handoff.accepted", reason: "approved" })).sessionState).toBe(SessionState.RESOLVED);
  });
});

describe("context files", () => {
  it("guesses the content type from the extension and enforces the 1 MiB limit", () => {
    expect(contentTypeFor("runbook.md")).toBe("text/markdown");
    expect(contentTypeFor("state.JSON")).toBe("application/json");
    expect(contentTypeFor("notes.txt")).toBe("text/plain");
    expect(contentTypeFor("dump.bin")).toBe("application/octet-stream");
    const dir = tempDir("baton-ctx-");
    try {
      const small = path.join(dir, "r.md");
      fs.writeFileSync(small, "# Runbook\n");
      expect(readContextFile(small)).toMatchObject({ contentType: "text/markdown", size: 10 });
      expect(readContextFile(small, { contentType: "text/plain" }).contentType).toBe("text/plain");
      const big = path.join(dir, "big.txt");
      fs.writeFileSync(big, Buffer.alloc(1_048_577, 97));
      expect(() => readContextFile(big)).toThrow(/1\.00 MiB limit/);
      expect(() => readContextFile(path.join(dir, "nope.md"))).toThrow(/no such file/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
