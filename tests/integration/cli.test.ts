// The baton CLI as separate processes (`node bin/baton.mjs …`), each acting
// as one identity against a runtime started here on port 0: a complete
// handoff read back with `sessions show --json`, a task with progress, a
// rejected action's exit code and message, usage errors, help, the context
// size check, `sessions watch` until Ctrl-C, and an unreachable runtime.
import { execFile, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningRuntime } from "@/lib/runtime";
import { startTestRuntime, tempDir } from "./harness";

const ROOT = path.resolve(__dirname, "..", "..");
const BIN = path.join(ROOT, "bin", "baton.mjs");
const OWNER = "agent://oncall/alice";
const TARGET = "agent://oncall/bob";
const OTHER = "agent://oncall/carol";

let rt: RunningRuntime;
let dir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function baton(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: dir, env: { ...process.env, MACP_RUNTIME_URL: rt.address, BATON_AS: "", BATON_TOKEN: "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Run as `who` and insist on exit 0. */
async function ok(who: string, args: string[]): Promise<Run> {
  const r = await baton(["--as", who, ...args]);
  if (r.code !== 0) throw new Error(`baton ${args.join(" ")} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

beforeAll(async () => {
  rt = await startTestRuntime();
  dir = tempDir("baton-cli-");
  fs.writeFileSync(
    path.join(dir, "runbook.md"),
    "# Payments on-call\n\n## Checks\n- pager app works\n- dashboards load\n\n## Escalation\n1. DBA after 15 min\n",
  );
});
afterAll(async () => {
  await rt?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// Independent flows run concurrently. Each flow spawns a dozen Node processes
// (about 0.3 s of CPU each, from the compiled bundle, bin/cli-bundle.mjs): on a busy
// 2-core machine a flow can take well over the default 30 s, so allow 120 s.
describe.concurrent("baton CLI (separate processes)", { timeout: 120_000 }, () => {
  it("drives a complete handoff as owner and target, and reads it back with sessions show --json", async () => {
    const start = await ok(OWNER, [
      "handoff",
      "start",
      "--participants",
      `${TARGET},${OTHER}`,
      "--intent",
      "payments on-call rotation",
      "--ttl",
      "30m",
    ]);
    const sid = start.stdout.trim();
    expect(sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(start.stderr).toMatch(/started handoff session/);

    const offer = await ok(OWNER, ["handoff", "offer", "--session", sid, "--to", TARGET, "--scope", "payments-api primary"]);
    expect(offer.stdout).toMatch(/offer h1 → agent:\/\/oncall\/bob: accepted/);
    const ctx = await ok(OWNER, ["--json", "handoff", "context", "--session", sid, "--file", "runbook.md"]);
    expect(JSON.parse(ctx.stdout)).toMatchObject({
      ok: true,
      session_id: sid,
      handoff_id: "h1",
      content_type: "text/markdown",
      session_state: "OPEN",
    });

    // A participant who is not the target: refused, exit 2, code and explanation.
    const [wrong, wrongJson] = await Promise.all([
      baton(["--as", OTHER, "handoff", "accept", "--session", sid]),
      baton(["--as", OTHER, "--json", "handoff", "accept", "--session", sid]),
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^error: FORBIDDEN: This participant is not allowed to send that message at this point\./);
    expect(wrong.stderr).toMatch(/runtime said: only the offer's target \(agent:\/\/oncall\/bob\) may accept it/);
    expect(wrongJson.code).toBe(2);
    expect(JSON.parse(wrongJson.stdout)).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });

    await ok(TARGET, ["handoff", "accept", "--session", sid, "--reason", "pager ready"]);
    const commit = await ok(OWNER, ["handoff", "commit", "--session", sid]);
    expect(commit.stdout).toMatch(/commit handoff\.accepted: accepted, session .* is RESOLVED/);

    const [late, show, human, list] = await Promise.all([
      // After the commitment nothing else is accepted.
      baton(["--as", OWNER, "handoff", "offer", "--session", sid, "--to", OTHER]),
      ok(TARGET, ["sessions", "show", sid, "--json"]),
      ok(OWNER, ["sessions", "show", sid]),
      ok(OWNER, ["sessions", "list", "--json"]),
    ]);
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(/SESSION_NOT_OPEN: The session is no longer open/);

    const doc = JSON.parse(show.stdout) as {
      metadata: Record<string, unknown>;
      projection: {
        phase: string;
        currentOwner: string;
        commitment: { action: string; outcomePositive: boolean; sender: string };
        handoff: {
          phase: string;
          offers: { handoffId: string; status: string; target: string; contexts: { contentType: string; context: string }[] }[];
        };
      };
      events: { sequence: number; message_type: string; sender: string; payload?: Record<string, unknown> }[];
    };
    expect(doc.metadata).toMatchObject({
      session_id: sid,
      state: "RESOLVED",
      initiator: OWNER,
      participants: [OWNER, TARGET, OTHER],
      policy_version: "policy.default",
    });
    expect(doc.projection.phase).toBe("Committed");
    expect(doc.projection.currentOwner).toBe(TARGET);
    expect(doc.projection.commitment).toMatchObject({ action: "handoff.accepted", outcomePositive: true, sender: OWNER });
    const offer1 = doc.projection.handoff.offers[0];
    expect(offer1).toMatchObject({ handoffId: "h1", status: "accepted", target: TARGET });
    expect(offer1?.contexts[0]?.contentType).toBe("text/markdown");
    expect(Buffer.from(offer1?.contexts[0]?.context ?? "", "base64").toString("utf8")).toMatch(/^# Payments on-call\n/);
    expect(doc.events.map((e) => [e.sequence, e.message_type, e.sender])).toEqual([
      [1, "SessionStart", OWNER],
      [2, "HandoffOffer", OWNER],
      [3, "HandoffContext", OWNER],
      [4, "HandoffAccept", TARGET],
      [5, "Commitment", OWNER],
    ]);
    expect(doc.events[4]?.payload).toMatchObject({ action: "handoff.accepted", outcome_positive: true });

    // The human-readable view and the list.
    expect(human.stdout).toMatch(/State\s+RESOLVED, phase Committed/);
    expect(human.stdout).toMatch(/h1\s+agent:\/\/oncall\/bob\s+accepted\s+payments-api primary\s+text\/markdown/);
    expect((JSON.parse(list.stdout) as { sessions: { session_id: string; state: string }[] }).sessions).toContainEqual(
      expect.objectContaining({ session_id: sid, state: "RESOLVED" }),
    );
  });

  it("delegates a task with progress and commits it", async () => {
    const planner = "agent://etl/planner";
    const worker = "agent://etl/worker";
    const sid = (
      await ok(planner, ["task", "request", "--to", worker, "--title", "Backfill March invoices", "--input", '{"month":"2025-03"}'])
    ).stdout.trim();
    await ok(worker, ["task", "accept", "--session", sid]);
    await ok(worker, ["task", "update", "--session", sid, "--progress", "30%", "--message", "January done"]);
    await ok(worker, ["task", "complete", "--session", sid, "--summary", "1204 invoices"]);
    const commit = await ok(planner, ["--json", "task", "commit", "--session", sid]);
    expect(JSON.parse(commit.stdout)).toMatchObject({ ok: true, action: "task.completed", session_state: "RESOLVED" });
    const doc = JSON.parse((await ok(worker, ["sessions", "show", sid, "--json"])).stdout) as {
      projection: {
        task: { phase: string; task: { status: string; latestProgress: number; activeAssignee: string; updates: { progress: number }[] } };
      };
    };
    expect(doc.projection.task.phase).toBe("Committed");
    expect(doc.projection.task.task).toMatchObject({ status: "completed", latestProgress: 1, activeAssignee: worker });
    expect(doc.projection.task.task.updates.map((u) => u.progress)).toEqual([0.3]);
  });

  it("usage errors exit 64 with a message; --help works per command", async () => {
    const big = path.join(dir, "big.md");
    fs.writeFileSync(big, Buffer.alloc(1_048_577, 97));
    const [noTarget, typo, nobody, tooBig, help, top] = await Promise.all([
      baton(["--as", OWNER, "handoff", "offer", "--session", "x"]),
      baton(["--as", OWNER, "handoff", "offer", "--sesion", "x"]),
      baton(["sessions", "list"]),
      baton(["--as", OWNER, "handoff", "context", "--session", "x", "--file", big]),
      baton(["handoff", "context", "--help"]),
      baton(["--help"]),
    ]);
    expect(noTarget.code).toBe(64);
    expect(noTarget.stderr).toMatch(/--to is required/);
    expect(noTarget.stderr).toMatch(/baton handoff offer --help/);

    expect(typo.code).toBe(64);
    expect(typo.stderr).toMatch(/unknown option --sesion \(did you mean --session\?\)/);

    expect(nobody.code).toBe(64);
    expect(nobody.stderr).toMatch(/pass --as <identity>/);

    expect(tooBig.code).toBe(64);
    expect(tooBig.stderr).toMatch(/big\.md is 1\.00 MiB, over the 1\.00 MiB limit/);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^baton handoff context: /);
    expect(help.stdout).toMatch(/md →\s+text\/markdown/);
    expect(help.stdout).toMatch(/--content-type <type>/);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Commands:\n\s+sessions/);
  });

  it("sessions watch streams lifecycle events until Ctrl-C", async () => {
    const child = spawn(process.execPath, [BIN, "--as", "agent://watcher", "--json", "sessions", "watch"], {
      cwd: dir,
      env: { ...process.env, MACP_RUNTIME_URL: rt.address },
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      // Wait until the watcher is connected (it prints the snapshot of existing sessions).
      const t0 = Date.now();
      while (!out.includes('"event_type"') && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
      const sid = (await ok(OWNER, ["handoff", "start", "--participants", TARGET])).stdout.trim();
      await ok(OWNER, ["sessions", "cancel", sid, "--reason", "postponed"]);
      const t1 = Date.now();
      while (!out.includes(`"CANCELLED"`) && Date.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 50));
      const events = out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { event_type: string; session: { session_id: string } })
        .filter((e) => e.session.session_id === sid)
        .map((e) => e.event_type);
      expect(events).toEqual(["CREATED", "CANCELLED"]);
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
  });

  it("talks TLS with --ca and token auth (--token, optionally naming its identity with --as)", async () => {
    const tlsDir = tempDir("baton-cli-tls-");
    const cert = path.join(tlsDir, "cert.pem");
    const key = path.join(tlsDir, "key.pem");
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
    try {
      const env = { MACP_RUNTIME_URL: tls.address };
      const start = await baton(["--ca", cert, "--token", "tok-alice", "--as", OWNER, "handoff", "start", "--participants", TARGET], env);
      expect(start.code).toBe(0);
      const sid = start.stdout.trim();
      const [show, bad] = await Promise.all([
        baton(["--tls", "--ca", cert, "--token", "tok-bob", "--json", "sessions", "show", sid], env),
        baton(["--ca", cert, "--token", "nope", "sessions", "list"], env),
      ]);
      expect(show.code).toBe(0);
      expect(JSON.parse(show.stdout)).toMatchObject({ metadata: { session_id: sid, initiator: OWNER, state: "OPEN" } });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/^error: UNAUTHENTICATED: /);
    } finally {
      await tls.close();
      fs.rmSync(tlsDir, { recursive: true, force: true });
    }
  });

  it("an unreachable runtime exits 1 with a hint", async () => {
    const r = await baton(["--as", OWNER, "--runtime", "127.0.0.1:1", "sessions", "list"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach the MACP runtime at 127\.0\.0\.1:1/);
    expect(r.stderr).toMatch(/npm run runtime/);
  });
});
