// `baton files offer|list|accept|complete|fail|reject|reoffer|show|watch|bridge`:
// v0.1 file-based handoffs (one JSON file per handoff in .handoffs/ or
// $HANDOFF_DIR), with the reference CLI's arguments, Baton's lock and
// compare-and-swap writes, live watching and the bridge to MACP.

import fs from "node:fs";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
// The library (ajv, SQLite, the bridge) loads when a files command runs, so other commands start as fast as before.
import type { BridgeEvent } from "@/lib/handoff-files/bridge";
import { HandoffError } from "@/lib/handoff-files/errors";
import type { HandoffAction, HandoffChange, HandoffDirectory, Snapshot, SqliteHistoryStore, ValidSnapshot, WriteResult } from "@/lib/handoff-files";

const load = () => import("@/lib/handoff-files");
import { parseDuration, UsageError, type FlagDef } from "../args";
import { Refusal, type Command, type CommandContext } from "../command";
import { fields, formatClock, table } from "../format";

const DIR: FlagDef = { name: "dir", type: "string", value: "<path>", description: "the handoff directory (default $HANDOFF_DIR, else .handoffs)" };
const AGENT: FlagDef = { name: "agent", type: "string", value: "<agent>", description: "who is acting (checked against to_agent)" };
const CONTEXT: FlagDef = { name: "context", type: "multi", value: "<key=value>", description: "add a context entry (repeatable)" };

/**
 * The handoff directory of --dir / $HANDOFF_DIR. When Baton's history store
 * exists ($BATON_DATA_DIR/handoff-files.sqlite, kept by the console, the
 * bridge or `files watch --record`), files it recorded as an illegal step are
 * shown as invalid and refused too.
 */
async function directory(ctx: CommandContext): Promise<HandoffDirectory> {
  const { cliHandoffDir, handoffSettingsFromEnv, historyFileFromEnv, HandoffDirectory, SqliteHistoryStore } = await load();
  const s = handoffSettingsFromEnv(ctx.io.env);
  const historyFile = historyFileFromEnv(ctx.io.env);
  let history: SqliteHistoryStore | undefined;
  if (ctx.command.path[1] !== "offer" && fs.existsSync(historyFile)) {
    history = new SqliteHistoryStore(historyFile);
    ctx.onClose(() => history?.close());
  }
  return new HandoffDirectory(cliHandoffDir(ctx.flags.str("dir"), ctx.io.env), {
    maxBytes: s.maxBytes,
    maxFiles: s.maxFiles,
    lockStaleMs: s.lockStaleMs,
    ...(history ? { history } : {}),
  });
}

function contextPairs(ctx: CommandContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of ctx.flags.list("context")) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`--context takes key=value, got "${item}"`, ctx.command.path);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1);
  }
  return out;
}

function onePositional(ctx: CommandContext, what: string): string {
  if (ctx.args.length !== 1) {
    throw new UsageError(ctx.args.length === 0 ? `which handoff? give its ${what}` : `unexpected argument ${ctx.args[1]}`, ctx.command.path);
  }
  return ctx.args[0] as string;
}

const short = (id: string) => (id.length > 8 ? id.slice(0, 8) : id);
const who = (agent: string) => agent || "anyone";

function clip(text: string, n: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > n ? `${line.slice(0, n - 1)}…` : line;
}

function handoffJson(s: ValidSnapshot): Record<string, unknown> {
  return { file: s.path, ...s.document };
}

function invalidJson(s: Snapshot): Record<string, unknown> {
  return s.valid ? handoffJson(s) : { file: s.path, valid: false, reason: s.reason, problems: s.problems };
}

/** Print the outcome of a write; a write replaced right after by a writer that ignores the lock is a refusal. */
function reportWrite(ctx: CommandContext, verb: string, r: WriteResult): number {
  const rec = r.snapshot.record;
  if (r.replacedBy !== undefined) {
    const now = r.replacedBy === null ? "the file is gone" : r.replacedBy.valid ? `it says ${r.replacedBy.record.status} now` : `it is no longer valid (${r.replacedBy.reason})`;
    throw new Refusal(`${rec.task_id} was ${verb}, but a writer that ignores ${path.basename(r.snapshot.path)}.lock replaced the file right after: ${now}`);
  }
  if (ctx.json) {
    ctx.printJson({ ok: true, task_id: rec.task_id, status: rec.status, previous_status: r.previous?.record.status ?? null, handoff: handoffJson(r.snapshot) });
  } else {
    const by = rec.status === "accepted" || rec.status === "rejected" ? ` by ${rec.to_agent}` : "";
    ctx.out(`✓ ${rec.task_id} ${verb}${by}${r.previous ? ` (was ${r.previous.record.status})` : ""}\n`);
  }
  return 0;
}

const offer: Command = {
  path: ["files", "offer"],
  summary: "offer work: write a new handoff file (prints its task_id)",
  usage: 'files offer "<description>" --from <agent> [--to <agent>] [--context key=value …]',
  description:
    "Creates <task_id>.json with status offered in the handoff directory (created if missing). Without --to anyone may " +
    "take it. Prints the task_id on stdout. Never replaces an existing file.",
  flags: [
    DIR,
    { name: "from", type: "string", value: "<agent>", description: "who offers the work (required)" },
    { name: "to", type: "string", value: "<agent>", description: "who should take it (default: anyone)" },
    CONTEXT,
    { name: "id", type: "string", value: "<task_id>", description: "the task_id (default: a new UUID v4)" },
  ],
  examples: ['baton files offer "Rotate the TLS certificates" --from agent://planner --context ticket=OPS-12'],
  needsIdentity: false,
  async run(ctx) {
    const description = ctx.args.join(" ");
    if (description.trim() === "") throw new UsageError('what is the work? give a description in quotes', ctx.command.path);
    const to = ctx.flags.str("to");
    const id = ctx.flags.str("id");
    const r = await (await directory(ctx)).offer({
      description,
      from: ctx.flags.required("from"),
      ...(to !== undefined ? { to } : {}),
      ...(id !== undefined ? { taskId: id } : {}),
      context: contextPairs(ctx),
    });
    const rec = r.snapshot.record;
    if (ctx.json) ctx.printJson({ ok: true, task_id: rec.task_id, status: rec.status, handoff: handoffJson(r.snapshot) });
    else {
      ctx.out(`${rec.task_id}\n`);
      ctx.err(`✓ offered to ${who(rec.to_agent)}: ${r.snapshot.path}\n`);
    }
    return 0;
  },
};

const list: Command = {
  path: ["files", "list"],
  summary: "list handoffs (and invalid files, with the reason)",
  usage: "files list [--status offered|accepted|completed|failed|rejected]",
  flags: [DIR, { name: "status", type: "string", value: "<status>", description: "only handoffs with this status" }],
  needsIdentity: false,
  async run(ctx) {
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    const { isHandoffStatus, HANDOFF_STATUSES } = await load();
    const status = ctx.flags.str("status");
    if (status !== undefined && !isHandoffStatus(status)) throw new UsageError(`--status must be one of ${HANDOFF_STATUSES.join(", ")}`, ctx.command.path);
    const hd = await directory(ctx);
    let missing = false;
    const r = await hd.list(status !== undefined ? { status } : {}).catch((e: unknown) => {
      if (!(e instanceof HandoffError) || e.kind !== "not-found") throw e;
      missing = true;
      return { handoffs: [], invalid: [], truncated: false };
    });
    // Snapshots Baton's history recorded as an illegal step are invalid too.
    const flagged = r.handoffs.map((h) => [h, hd.recordedProblem(h)] as const).filter(([, p]) => p !== undefined);
    const handoffs = r.handoffs.filter((h) => !flagged.some(([f]) => f === h));
    const invalid: { name: string; path: string; reason: string; json: Record<string, unknown> }[] = [
      ...r.invalid.map((i) => ({ name: i.name, path: i.path, reason: i.valid ? "" : i.reason, json: invalidJson(i) })),
      ...flagged.map(([h, p]) => ({ name: h.name, path: h.path, reason: p as string, json: { file: h.path, valid: false, reason: p, problems: [{ code: "illegal-transition", message: p }] } })),
    ];
    if (ctx.json) {
      ctx.printJson({ dir: hd.dir, exists: !missing, handoffs: handoffs.map(handoffJson), invalid: invalid.map((i) => i.json), truncated: r.truncated });
      return 0;
    }
    if (handoffs.length === 0) ctx.out(`no ${status ?? ""}${status ? " " : ""}handoffs in ${hd.dir}${missing ? " (the directory does not exist yet)" : ""}\n`);
    else {
      const rows = handoffs.map((h) => [short(h.record.task_id), h.record.status, h.record.from_agent, who(h.record.to_agent), h.record.updated_at, clip(h.record.description, 60)]);
      ctx.out(table(["ID", "STATUS", "FROM", "TO", "UPDATED", "DESCRIPTION"], rows));
    }
    if (invalid.length) {
      ctx.out(`\n${invalid.length} invalid file${invalid.length === 1 ? "" : "s"} (left as they are):\n`);
      for (const i of invalid) ctx.out(`  ${i.name}: ${i.reason}\n`);
    }
    if (r.truncated) ctx.err(`(only the first ${hd.maxFiles} files were read; BATON_HANDOFF_MAX_FILES raises the limit)\n`);
    return 0;
  },
};

const show: Command = {
  path: ["files", "show"],
  summary: "show one handoff (by task_id or a unique prefix)",
  usage: "files show <id-prefix>",
  flags: [DIR],
  needsIdentity: false,
  async run(ctx) {
    const hd = await directory(ctx);
    const s = await hd.resolve(onePositional(ctx, "task_id or a prefix of it"));
    const recorded = s.valid ? hd.recordedProblem(s) : undefined;
    if (ctx.json) {
      ctx.printJson(
        s.valid
          ? { valid: recorded === undefined, ...(recorded !== undefined ? { reason: recorded } : {}), handoff: handoffJson(s), read_only: s.viaSymlink }
          : { valid: false, ...invalidJson(s) },
      );
      return 0;
    }
    if (!s.valid) {
      ctx.out(fields([["file", s.path], ["valid", `no: ${s.reason}`]]));
      return 0;
    }
    if (recorded !== undefined) ctx.out(`INVALID (recorded by Baton's history): ${recorded}\n\n`);
    const r = s.record;
    const known = new Set(["task_id", "from_agent", "to_agent", "status", "description", "context", "created_at", "updated_at"]);
    const extra = Object.entries(s.document).filter(([k]) => !known.has(k));
    ctx.out(
      fields([
        ["task_id", r.task_id],
        ["status", r.status],
        ["from_agent", r.from_agent],
        ["to_agent", who(r.to_agent)],
        ["created_at", r.created_at],
        ["updated_at", r.updated_at],
        ["file", `${s.path}${s.viaSymlink ? " (a link: read-only for Baton)" : ""}`],
        ...(Object.keys(r.context).length ? [["context", JSON.stringify(r.context)] as const] : []),
        ...extra.map(([k, v]) => [k, JSON.stringify(v)] as const),
      ]),
    );
    ctx.out(`\n${r.description}\n`);
    return 0;
  },
};

type ActionBuilder = (ctx: CommandContext) => HandoffAction;

function action(kind: HandoffAction["kind"], verb: string, summary: string, usage: string, flags: FlagDef[], build: ActionBuilder, description?: string): Command {
  return {
    path: ["files", kind],
    summary,
    usage,
    ...(description ? { description } : {}),
    flags: [DIR, ...flags],
    needsIdentity: false,
    async run(ctx) {
      const prefix = onePositional(ctx, "task_id or a prefix of it");
      const act = build(ctx);
      const r = await (await directory(ctx)).act(prefix, act, { signal: ctx.signal });
      return reportWrite(ctx, verb, r);
    },
  };
}

const optionalAgent = (ctx: CommandContext) => {
  const a = ctx.flags.str("agent");
  return a !== undefined ? { agent: a } : {};
};

const WRITE_NOTE =
  "The write is atomic and compare-and-swap under the lock <task_id>.json.lock: if another writer changed the handoff " +
  "first (a lost race) or the state machine does not allow the step, nothing is written and the exit code is 2.";

const actions: Command[] = [
  action(
    "accept",
    "accepted",
    "take an offered handoff (you become to_agent)",
    "files accept <id-prefix> --agent <agent>",
    [{ ...AGENT, description: "who takes it (required; must be to_agent when one is set)" }],
    (ctx) => ({ kind: "accept", agent: ctx.flags.required("agent") }),
    WRITE_NOTE,
  ),
  action(
    "complete",
    "completed",
    "report an accepted handoff done",
    "files complete <id-prefix> [--agent <agent>] [--context key=value …]",
    [AGENT, CONTEXT],
    (ctx) => ({ kind: "complete", ...optionalAgent(ctx), context: contextPairs(ctx) }),
    WRITE_NOTE,
  ),
  action(
    "fail",
    "failed",
    "report that an accepted handoff failed (the offerer may re-offer it)",
    "files fail <id-prefix> [--agent <agent>] [--context key=value …]",
    [AGENT, CONTEXT],
    (ctx) => ({ kind: "fail", ...optionalAgent(ctx), context: contextPairs(ctx) }),
    WRITE_NOTE,
  ),
  action(
    "reject",
    "rejected",
    "turn an offered handoff down",
    "files reject <id-prefix> --agent <agent> [--context key=value …]",
    [{ ...AGENT, description: "who turns it down (required; must be to_agent when one is set)" }, CONTEXT],
    (ctx) => ({ kind: "reject", agent: ctx.flags.required("agent"), context: contextPairs(ctx) }),
    WRITE_NOTE,
  ),
  action(
    "reoffer",
    "re-offered",
    "offer a failed handoff again",
    "files reoffer <id-prefix> [--to <agent>] [--agent <from_agent>] [--context key=value …]",
    [{ name: "to", type: "string", value: "<agent>", description: "who should take it now (default: anyone)" }, { ...AGENT, description: "who re-offers it (checked against from_agent)" }, CONTEXT],
    (ctx) => {
      const to = ctx.flags.str("to");
      return { kind: "reoffer", ...optionalAgent(ctx), ...(to !== undefined ? { to } : {}), context: contextPairs(ctx) };
    },
    WRITE_NOTE,
  ),
];

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

/** Wait for Ctrl-C. The watchers' handles do not keep the process alive on their own, this does. */
async function untilInterrupted(ctx: CommandContext): Promise<void> {
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) return resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
  } finally {
    clearInterval(keepAlive);
  }
}

async function historyStore(ctx: CommandContext): Promise<SqliteHistoryStore | undefined> {
  const { historyFileFromEnv, SqliteHistoryStore } = await load();
  const file = ctx.flags.str("history") ?? (ctx.flags.bool("record") ? historyFileFromEnv(ctx.io.env) : undefined);
  return file === undefined ? undefined : new SqliteHistoryStore(file);
}

const watch: Command = {
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

const bridge: Command = {
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
    { name: "participants", type: "list", value: "<agents>", description: "MACP agents added to every session; they may take offers made to anyone" },
    { name: "ttl", type: "string", value: "<duration>", description: "session time to live (default 24h, the maximum); expired sessions are replaced" },
    { name: "state", type: "string", value: "<file>", description: "the bridge's SQLite state and history (default $BATON_DATA_DIR/handoff-files.sqlite)" },
    { name: "tokens", type: "string", value: "<file>", description: "agents' tokens for a runtime with token auth ([{token, sender}, …])" },
  ],
  examples: ["baton files bridge --participants agent://worker-1,agent://worker-2", "baton --runtime 10.0.0.5:50051 files bridge --dir /srv/handoffs --tokens tokens.json"],
  needsIdentity: false,
  async run(ctx) {
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    const { cliHandoffDir, handoffSettingsFromEnv, historyFileFromEnv, SqliteHistoryStore } = await load();
    const { devCredentials, HandoffBridge, SqliteBridgeState, tokenCredentials } = await import("@/lib/handoff-files/bridge");
    const { MacpClient } = await import("@/lib/agent");
    const s = handoffSettingsFromEnv(ctx.io.env);
    const dir = cliHandoffDir(ctx.flags.str("dir"), ctx.io.env);
    const ttlMs = ctx.flags.str("ttl") !== undefined ? parseDuration(ctx.flags.str("ttl") as string, "--ttl") : undefined;
    if (ttlMs !== undefined && (ttlMs < 1_000 || ttlMs > 86_400_000)) throw new UsageError("--ttl must be between 1s and 24h", ctx.command.path);
    const tokensFile = ctx.flags.str("tokens");
    const credentials = tokensFile !== undefined ? tokenCredentials(tokensFile) : devCredentials;
    const stateFile = path.resolve(ctx.flags.str("state") ?? historyFileFromEnv(ctx.io.env));
    // Fail fast and clearly when the runtime cannot be reached.
    const probeAuth = ctx.globals.as !== undefined || ctx.globals.token !== undefined ? ctx.auth() : credentials("baton:files-bridge");
    if (probeAuth) {
      const probe = new MacpClient({ address: ctx.globals.runtime, auth: probeAuth, tls: ctx.globals.tls, ...(ctx.globals.ca ? { caPath: ctx.globals.ca } : {}), clientName: "baton-files-bridge" });
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

export const filesCommands: Command[] = [offer, list, show, ...actions, watch, bridge];
