// The agent layer (lib/agent) against the real runtime on loopback: auth styles and TLS.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Code, type ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Auth, HandoffSession, MacpClient } from "@/lib/agent";
import { startTestRuntime, tempDir } from "./harness";
import { clientAs, OWNER, rejection, TARGET, useAgentRuntime } from "./__fixtures__/agent-kit";

useAgentRuntime();

describe("auth styles and TLS", () => {
  it("accepts the legacy x-macp-agent-id dev header", async () => {
    const s = new HandoffSession(clientAs(OWNER, "x-macp-agent-id"));
    const ack = await s.start({ intent: "legacy header", participants: [OWNER, TARGET], ttlMs: 60_000 });
    expect(ack.ok).toBe(true);
    expect((await s.metadata()).initiator).toBe(OWNER);
  });

  it("talks TLS with a CA file and token auth; the runtime fills in the sender", async () => {
    const dir = tempDir("baton-agent-tls-");
    const cert = path.join(dir, "cert.pem");
    const key = path.join(dir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    const tls = await startTestRuntime({
      MACP_ALLOW_INSECURE: "0",
      MACP_TLS_CERT_PATH: cert,
      MACP_TLS_KEY_PATH: key,
      MACP_AUTH_TOKENS_JSON: JSON.stringify([
        { token: "tok-alice", sender: OWNER },
        { token: "tok-bob", sender: TARGET },
      ]),
    });
    const alice = new MacpClient({ address: tls.address, tls: true, caPath: cert, auth: Auth.bearer("tok-alice") });
    const bob = new MacpClient({ address: tls.address, caPath: cert, auth: Auth.bearer("tok-bob", { expectedSender: TARGET }) });
    try {
      expect(alice.baseUrl.startsWith("https://")).toBe(true);
      const s = new HandoffSession(alice);
      await s.start({ intent: "over TLS", participants: [OWNER, TARGET], ttlMs: 60_000 });
      await s.offer({ targetParticipant: TARGET });
      await new HandoffSession(bob, { sessionId: s.sessionId }).acceptHandoff({ handoffId: "h1" });
      const events = await alice.history(s.sessionId);
      expect(events.map((e) => e.envelope.sender)).toEqual([OWNER, OWNER, TARGET]);
      const wrong = new MacpClient({ address: tls.address, caPath: cert, auth: Auth.bearer("nope") });
      const err = await rejection(wrong.listSessions());
      wrong.close();
      expect((err as ConnectError).code).toBe(Code.Unauthenticated);
      expect(() => new MacpClient({ address: tls.address, caPath: path.join(dir, "missing.pem") })).toThrow(/cannot read CA file/);
    } finally {
      alice.close();
      bob.close();
      await tls.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
