// Durability: a restarted runtime rebuilds every session from disk, and a
// SIGKILL in the middle of a burst loses no acknowledged envelope.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { agent, clientFor, collectEnvelopes, newSessionId, startTestRuntime, tempDir } from "./harness";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("restart recovery", () => {
  it("finishes a handoff started before a restart, with state, dedup, policies and deadlines intact", async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const env = { MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir };
    const sid = newSessionId();

    const first = await startTestRuntime(env);
    const admin = clientFor(first, "admin");
    expect(
      (
        await admin.registerPolicy({
          policyDescriptor: {
            policyId: "policy.oncall.lead",
            mode: HANDOFF_MODE,
            rules: JSON.stringify({ commitment: { authority: "designated_role", designated_roles: ["lead"] } }),
            schemaVersion: 1,
          },
        })
      ).ok,
    ).toBe(true);
    const owner = agent(first, "owner", sid);
    await owner.start(["owner", "target", "lead"], { policy: "policy.oncall.lead", messageId: "start-1" });
    await owner.send("HandoffOffer", { handoffId: "h1", targetParticipant: "target", scope: "pager" }, { messageId: "offer-1" });
    await owner.send(
      "HandoffContext",
      { handoffId: "h1", contentType: "text/markdown", context: new TextEncoder().encode("# Runbook") },
      { messageId: "ctx-1" },
    );
    const before = (await clientFor(first, "owner").getSession({ sessionId: sid })).metadata;
    await first.close();

    const second = await startTestRuntime(env);
    try {
      const c = clientFor(second, "owner");
      const after = (await c.getSession({ sessionId: sid })).metadata;
      expect(after?.state).toBe(SessionState.OPEN);
      expect(after?.expiresAtUnixMs).toBe(before?.expiresAtUnixMs);
      expect(after?.startedAtUnixMs).toBe(before?.startedAtUnixMs);
      expect(after?.policyVersion).toBe("policy.oncall.lead");
      expect((await clientFor(second, "x").getPolicy({ policyId: "policy.oncall.lead" })).policyDescriptor?.mode).toBe(HANDOFF_MODE);

      const owner2 = agent(second, "owner", sid);
      const dup = await owner2.send("HandoffOffer", { handoffId: "h1", targetParticipant: "target" }, { messageId: "offer-1" });
      expect(dup.ok && dup.duplicate).toBe(true);
      // Mode state survived: a second offer while h1 is pending is still refused.
      expect((await owner2.send("HandoffOffer", { handoffId: "h2", targetParticipant: "lead" })).error?.code).toBe("INVALID_ENVELOPE");
      expect((await agent(second, "target", sid).send("HandoffAccept", { handoffId: "h1" }, { messageId: "acc-1" })).ok).toBe(true);
      const p = { policy: "policy.oncall.lead" };
      expect((await owner2.commit("handoff.accepted", true, p)).error?.code).toBe("FORBIDDEN");
      const done = await agent(second, "lead", sid).commit("handoff.accepted", true, { ...p, messageId: "commit-1" });
      expect(done.sessionState).toBe(SessionState.RESOLVED);
      const history = await collectEnvelopes(c, sid, 5);
      expect(history.map((e) => e.messageId)).toEqual(["start-1", "offer-1", "ctx-1", "acc-1", "commit-1"]);
    } finally {
      await second.close();
    }

    // A third start sees the resolved session and its history.
    const third = await startTestRuntime(env);
    try {
      expect((await clientFor(third, "owner").getSession({ sessionId: sid })).metadata?.state).toBe(SessionState.RESOLVED);
    } finally {
      await third.close();
    }
  });
});

function spawnRuntime(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(process.cwd(), "lib/runtime/main.ts")], {
    env: {
      ...process.env,
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_ALLOW_INSECURE: "1",
      MACP_MEMORY_ONLY: "0",
      MACP_DATA_DIR: dataDir,
      MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
      MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
      MACP_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`runtime did not start: ${err}`)), 20_000);
    child.stderr?.on("data", (d) => (err += String(d)));
    child.stdout?.on("data", (d) => {
      buf += String(d);
      const m = /MACP runtime listening on (http:\/\/[^"\s]+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.on("exit", (code) => reject(new Error(`runtime exited with ${code}: ${err}`)));
  });
}

describe("crash safety", () => {
  it("SIGKILL during a burst of concurrent sends loses no acknowledged envelope", async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const { child, url } = await spawnRuntime(dataDir);
    const rt = { url };
    const workers = 24;
    const sessions = Array.from({ length: workers }, () => newSessionId());
    for (const sid of sessions) {
      const o = agent(rt, "owner", sid);
      expect((await o.start(["owner", "target"])).ok).toBe(true);
      expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "target" })).ok).toBe(true);
    }
    const acked = new Map<string, string[]>(sessions.map((s) => [s, []]));
    let stop = false;
    const loops = sessions.map(async (sid) => {
      const o = agent(rt, "owner", sid);
      for (let i = 0; !stop; i++) {
        const id = `ctx-${i}`;
        try {
          const ack = await o.send(
            "HandoffContext",
            { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode(`note ${i}`) },
            { messageId: id },
          );
          if (ack.ok) acked.get(sid)!.push(id);
        } catch {
          return; // connection dropped by the kill
        }
      }
    });
    // Kill mid-burst once enough has been acknowledged (by count, not time:
    // a busy machine acknowledges fewer per second), still sending.
    const ackedSoFar = (): number => [...acked.values()].reduce((n, l) => n + l.length, 0);
    const deadline = Date.now() + 30_000;
    while (ackedSoFar() < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    child.kill("SIGKILL");
    stop = true;
    await Promise.all(loops);
    const total = [...acked.values()].reduce((n, l) => n + l.length, 0);
    expect(total).toBeGreaterThan(100);

    const restarted = await spawnRuntime(dataDir);
    try {
      const c = clientFor(restarted, "owner");
      for (const sid of sessions) {
        const meta = (await c.getSession({ sessionId: sid })).metadata!;
        const count = 1 + meta.participantActivity.reduce((n, a) => n + a.messageCount, 0);
        const history = await collectEnvelopes(c, sid, count);
        expect(history).toHaveLength(count);
        const ids = new Set(history.map((e) => e.messageId));
        for (const id of acked.get(sid)!) expect(ids.has(id), `${sid} lost acked ${id}`).toBe(true);
        // The session still works after recovery.
        const more = await agent(restarted, "target", sid).send("HandoffAccept", { handoffId: "h1" });
        expect(more.ok, more.error?.message).toBe(true);
      }
    } finally {
      restarted.child.kill("SIGTERM");
    }
  }, 60_000);
});
