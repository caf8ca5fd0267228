// `baton files watch` and `baton files bridge`: the commands that run until
// Ctrl-C, printing one line (or one JSON object) per change.
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { BridgeEvent } from "@/lib/handoff-files/bridge";
import type { HandoffChange, SqliteHistoryStore } from "@/lib/handoff-files";
import { parseDuration, UsageError } from "../args";
import type { Command, CommandContext } from "../command";
import { formatClock } from "../format";
import { DIR, clip, load, short, untilInterrupted, who } from "./files-common";

function changeLine(c: HandoffChange): string {
  const time = formatClock(c.observedAtMs);
  const id = short(c.taskId);
  if (c.kind === "removed") return `${time}  ${"removed".padEnd(9)}  ${id}`;
  const s = c.snapshot;
  if (!s?.valid) return `${time}  ${"INVALID".padEnd(9)}  ${id}  ${s?.reason ?? ""}`;
  const r = s.record;
  let line = `${time}  ${r.status.padEnd(9)}  ${id}  ${r.from_agent} → ${who(r.to_agent)}  ${JSON.stringify(clip(r.description, 60))}`;
  if (c.step === "illegal" || c.step === "gap") line += `  [${c.step}: ${c.stepProblem ?? ""}]`;
  return line;
}

function changeJson(c: HandoffChange): Record<string, unknown> {
  const s = c.snapshot;
  return {
    observed_at: new Date(c.observedAtMs).toISOString(),
    kind: c.kind,
    source: c.source,
    dir: c.dir,
    task_id: c.taskId,
    ...(c.previousStatus ? { previous_status: c.previousStatus } : {}),
    ...(c.step ? { step: c.step } : {}),
    ...(c.stepProblem ? { step_problem: c.stepProblem } : {}),
    ...(s ? { valid: s.valid, ...(s.valid ? { handoff: s.document } : { reason: s.reason }) } : {}),
  };
}

async function historyStore(ctx: CommandContext): Promise<SqliteHistoryStore | undefined> {
  const { historyFileFromEnv, SqliteHistoryStore } = await load();
  const file = ctx.flags.str("history") ?? (ctx.flags.bool("record") ? historyFileFromEnv(ctx.io.env) : undefined);
  return file === undefined ? undefined : new SqliteHistoryStore(file);
}

export const watch: Command = {
  path: ["files", "watch"],
  summary: "print handoff changes as they happen, until Ctrl-C",
  usage: "files watch [--record | --history <file>]",
  description:
    "Prints one line per handoff already there, then one line per change within a second (file notifications, or " +
    "polling on network filesystems; BATON_HANDOFF_WATCH=poll forces polling). Illegal steps and invalid files are " +
    "shown with the reason. --record also records every change in Baton's history store ($BATON_DATA_DIR/" +
    "handoff-files.sqlite), the timeline the console shows. With --json, one JSON object per line.",
  flags: [
    DIR,
    { name: "record", type: "boolean", description: "record changes in the history store" },
    { name: "history", type: "string", value: "<file>", description: "record changes in this SQLite file instead" },
  ],
  needsIdentity: false,
  async run(ctx) {
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    const { cliHandoffDir, handoffSettingsFromEnv, HandoffWatcher } = await load();
    const s = handoffSettingsFromEnv(ctx.io.env);
    const dir = cliHandoffDir(ctx.flags.str("dir"), ctx.io.env);
    const history = await historyStore(ctx);
    const w = new HandoffWatcher({
      dirs: [dir],
      mode: s.watchMode,
      pollMs: s.pollMs,
      maxFiles: s.maxFiles,
      maxBytes: s.maxBytes,
      ...(history ? { history } : {}),
      onError: (e) => ctx.err(`(${e instanceof Error ? e.message : String(e)})\n`),
    });
    w.subscribe((c) => ctx.out(ctx.json ? `${JSON.stringify(changeJson(c))}\n` : `${changeLine(c)}\n`));
    try {
      await w.start();
      const st = w.status()[0];
      const how = st?.mode === "missing" ? "waiting for it to be created" : st?.mode === "poll" ? "polling" : "file notifications";
      ctx.err(`Watching ${dir} (${how}${history ? ", recording history" : ""}; Ctrl-C to stop)\n`);
      await untilInterrupted(ctx);
    } finally {
      w.stop();
      history?.close();
    }
    return 0;
  },
};

function bridgeLine(e: BridgeEvent): string {
  const time = formatClock(Date.now());
  const id = "taskId" in e && e.taskId ? short(e.taskId) : "-";
  switch (e.kind) {
    case "sent":
      return `${time}  ${id}  → MACP  ${e.step}${e.duplicate ? " (already sent: duplicate)" : ""}  session ${e.sessionId}`;
    case "file":
      return `${time}  ${id}  ← MACP  file ${e.action}: ${e.why}`;
    case "epoch":
      return `${time}  ${id}  session ${e.sessionId} (epoch ${e.epoch}): ${e.reason}`;
    case "error":
      return `${time}  ${id}  error: ${e.message}`;
    default:
      return `${time}  ${id}  ${e.kind}: ${e.reason}`;
  }
}

export const bridge: Command = {
  path: ["files", "bridge"],
  summary: "mirror the directory into MACP Task sessions on a runtime, and MACP results back into the files",
  usage: "files bridge [--participants <agents>] [--ttl 24h] [--state <file>] [--tokens <file>]",
  description:
    "offered → SessionStart + TaskRequest from from_agent; accepted → TaskAccept as to_agent; completed → TaskComplete " +
    "and a Commitment; failed → TaskFail and a Commitment; rejected → TaskReject and a cancel; a re-offer starts a new " +
    "session. MACP agents' TaskAccept, TaskReject, TaskComplete and TaskFail are written into the files. The v0.1 " +
    "task_id is the session's context_id and the task's task_id. Idempotent: the bridge's state (in --state, default " +
    "$BATON_DATA_DIR/handoff-files.sqlite) and fixed message ids mean a restart never creates a session twice. On a " +
    "dev-mode runtime the bridge acts as each agent by name; on a token runtime give the agents' tokens with --tokens " +
    "(the runtime's MACP_AUTH_TOKENS_FILE format). Runs until Ctrl-C.",
  flags: [
    DIR,
    {
      name: "participants",
      type: "list",
      value: "<agents>",
      description: "MACP agents added to every session; they may take offers made to anyone",
    },
    {
      name: "ttl",
      type: "string",
      value: "<duration>",
      description: "session time to live (default 24h, the maximum); expired sessions are replaced",
    },
    {
      name: "state",
      type: "string",
      value: "<file>",
      description: "the bridge's SQLite state and history (default $BATON_DATA_DIR/handoff-files.sqlite)",
    },
    { name: "tokens", type: "string", value: "<file>", description: "agents' tokens for a runtime with token auth ([{token, sender}, …])" },
  ],
  examples: [
    "baton files bridge --participants agent://worker-1,agent://worker-2",
    "baton --runtime 10.0.0.5:50051 files bridge --dir /srv/handoffs --tokens tokens.json",
  ],
  needsIdentity: false,
  async run(ctx) {
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    const { cliHandoffDir, handoffSettingsFromEnv, historyFileFromEnv, SqliteHistoryStore } = await load();
    const { devCredentials, HandoffBridge, SqliteBridgeState, tokenCredentials } = await import("@/lib/handoff-files/bridge");
    const { MacpClient } = await import("@/lib/agent");
    const s = handoffSettingsFromEnv(ctx.io.env);
    const dir = cliHandoffDir(ctx.flags.str("dir"), ctx.io.env);
    const ttlMs = ctx.flags.str("ttl") !== undefined ? parseDuration(ctx.flags.str("ttl") as string, "--ttl") : undefined;
    if (ttlMs !== undefined && (ttlMs < 1_000 || ttlMs > 86_400_000))
      throw new UsageError("--ttl must be between 1s and 24h", ctx.command.path);
    const tokensFile = ctx.flags.str("tokens");
    const credentials = tokensFile !== undefined ? tokenCredentials(tokensFile) : devCredentials;
    const stateFile = path.resolve(ctx.flags.str("state") ?? historyFileFromEnv(ctx.io.env));
    // Fail fast and clearly when the runtime cannot be reached.
    const probeAuth = ctx.globals.as !== undefined || ctx.globals.token !== undefined ? ctx.auth() : credentials("baton:files-bridge");
    if (probeAuth) {
      const probe = new MacpClient({
        address: ctx.globals.runtime,
        auth: probeAuth,
        tls: ctx.globals.tls,
        ...(ctx.globals.ca ? { caPath: ctx.globals.ca } : {}),
        clientName: "baton-files-bridge",
      });
      try {
        await probe.initialize({ signal: ctx.signal, timeoutMs: 5_000 });
      } catch (e) {
        if (!(e instanceof ConnectError) || e.code === Code.Unavailable || e.code === Code.DeadlineExceeded) throw e;
      } finally {
        probe.close();
      }
    }
    const state = new SqliteBridgeState(stateFile);
    const history = new SqliteHistoryStore(stateFile);
    const b = new HandoffBridge({
      dir,
      runtime: ctx.globals.runtime,
      tls: ctx.globals.tls,
      ...(ctx.globals.ca ? { caPath: ctx.globals.ca } : {}),
      credentials,
      participants: ctx.flags.list("participants"),
      ...(ttlMs !== undefined ? { ttlMs } : {}),
      state,
      history,
      directory: { maxBytes: s.maxBytes, maxFiles: s.maxFiles, lockStaleMs: s.lockStaleMs },
      watch: { mode: s.watchMode, pollMs: s.pollMs, maxFiles: s.maxFiles, maxBytes: s.maxBytes },
      onEvent: (e) => ctx.out(ctx.json ? `${JSON.stringify({ at: new Date().toISOString(), ...e })}\n` : `${bridgeLine(e)}\n`),
    });
    try {
      await b.start();
      if (!ctx.json) ctx.err(`Bridging ${dir} ↔ MACP runtime ${ctx.globals.runtime} (state ${stateFile}; Ctrl-C to stop)\n`);
      await untilInterrupted(ctx);
    } finally {
      await b.stop();
      state.close();
      history.close();
    }
    return 0;
  },
};
