// `baton task request|accept|reject|update|complete|fail|commit`

import { Code, ConnectError } from "@connectrpc/connect";
import { readContextFile, TaskSession } from "@/lib/agent";
import { parseDuration, parseProgress, UsageError, type FlagDef } from "../args";
import type { Command, CommandContext } from "../command";
import { percent } from "../format";
import { COMMIT_FLAGS, outcomeFlag, participantsWithCaller } from "./handoff";

const SESSION: FlagDef = { name: "session", type: "string", value: "<id>", description: "the task session (printed by `task request`)" };
const TASK_ID: FlagDef = { name: "task-id", type: "string", value: "<id>", description: "the task (default: the session's task)" };
const REASON: FlagDef = { name: "reason", type: "string", value: "<text>", description: "why, in a few words" };

function noPositionals(ctx: CommandContext): void {
  if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
}

async function attach(ctx: CommandContext): Promise<TaskSession> {
  return TaskSession.attach(ctx.client(), ctx.flags.required("session"), { signal: ctx.signal });
}

function taskIdOpt(ctx: CommandContext): { taskId?: string } {
  const t = ctx.flags.str("task-id");
  return t ? { taskId: t } : {};
}

/** Bytes from --<name> text or --<name>-file, if either is given. */
function blob(ctx: CommandContext, name: string): Uint8Array | undefined {
  const text = ctx.flags.str(name);
  const file = ctx.flags.str(`${name}-file`);
  if (text !== undefined && file !== undefined) throw new UsageError(`give --${name} or --${name}-file, not both`, ctx.command.path);
  if (file !== undefined) return readContextFile(file).context;
  return text === undefined ? undefined : new TextEncoder().encode(text);
}

const request: Command = {
  path: ["task", "request"],
  summary: "delegate a task (starts the session unless --session names an existing one); prints the session id",
  usage: "task request --to <assignee> --title <text> [--instructions <text>] [--participants <ids>] [--session <id>]",
  description:
    "Starts a Task-mode session with you as the requester (unless --session names a session that already exists) and " +
    "sends the TaskRequest. You and --to are added to the participants automatically. Without --to, any participant " +
    "other than you may take the task. Prints the session id on stdout.",
  flags: [
    SESSION,
    { name: "to", type: "string", value: "<assignee>", description: "who should do it (default: any participant)" },
    { name: "title", type: "string", value: "<text>", description: "short title of the task" },
    { name: "instructions", type: "string", value: "<text>", description: "what to do, in detail" },
    { name: "input", type: "string", value: "<text>", description: "input data, inline" },
    { name: "input-file", type: "string", value: "<path>", description: "input data from a file (max 1 MiB)" },
    { name: "task-id", type: "string", value: "<id>", description: "id of the task (default t1)" },
    { name: "deadline", type: "string", value: "<duration>", description: "informational deadline from now, e.g. 2h" },
    { name: "participants", type: "list", value: "<ids>", description: "further participants (repeat or comma-separate)" },
    { name: "intent", type: "string", value: "<text>", description: "session intent (default: the title)" },
    { name: "ttl", type: "string", value: "<duration>", description: "session time to live (default 1h)" },
    { name: "policy", type: "string", value: "<policy-id>", description: "governance policy to bind" },
  ],
  examples: ['baton --as agent://etl/planner task request --to agent://etl/worker-7 --title "Backfill March invoices"'],
  async run(ctx) {
    noPositionals(ctx);
    const title = ctx.flags.required("title");
    const to = ctx.flags.str("to");
    const client = ctx.client();
    const sid = ctx.flags.str("session");
    let session: TaskSession | undefined;
    if (sid !== undefined) {
      try {
        session = await TaskSession.attach(client, sid, { signal: ctx.signal });
      } catch (e) {
        if (!(e instanceof ConnectError && e.code === Code.NotFound)) throw e;
      }
    }
    let started = false;
    if (!session) {
      const participants = participantsWithCaller(ctx, to ? [to] : []);
      if (participants.length < 2)
        throw new UsageError("a task needs at least two participants: pass --to or --participants", ctx.command.path);
      session = new TaskSession(client, {
        ...(sid !== undefined ? { sessionId: sid } : {}),
        ...(ctx.flags.str("policy") ? { policyVersion: ctx.flags.str("policy") } : {}),
      });
      await session.start({
        intent: ctx.flags.str("intent") ?? title,
        participants,
        ttlMs: parseDuration(ctx.flags.str("ttl") ?? "1h", "--ttl"),
        signal: ctx.signal,
      });
      started = true;
    }
    const input = blob(ctx, "input");
    const deadline = ctx.flags.str("deadline");
    const ack = await session.request({
      ...taskIdOpt(ctx),
      title,
      instructions: ctx.flags.str("instructions") ?? "",
      requestedAssignee: to ?? "",
      ...(input !== undefined ? { input } : {}),
      ...(deadline !== undefined ? { deadlineUnixMs: Date.now() + parseDuration(deadline, "--deadline") } : {}),
      signal: ctx.signal,
    });
    const taskId = session.projection.task?.taskId ?? "t1";
    if (ctx.json) ctx.reportAck("request", ack, { task_id: taskId, started });
    else {
      ctx.out(`${session.sessionId}\n`);
      ctx.err(`✓ ${started ? "started task session and " : ""}requested ${taskId} "${title}" from ${to ?? "any participant"}\n`);
    }
    return 0;
  },
};

function respond(kind: "accept" | "reject"): Command {
  return {
    path: ["task", kind],
    summary: kind === "accept" ? "take on the task (you become the assignee)" : "turn the task down",
    usage: `task ${kind} --session <id> [--reason <text>]`,
    flags: [SESSION, TASK_ID, REASON],
    async run(ctx) {
      noPositionals(ctx);
      const s = await attach(ctx);
      const input = { ...taskIdOpt(ctx), reason: ctx.flags.str("reason") ?? "", signal: ctx.signal };
      const ack = kind === "accept" ? await s.acceptTask(input) : await s.reject(input);
      const taskId = input.taskId ?? s.projection.task?.taskId;
      ctx.reportAck(`${kind} ${taskId ?? "task"}`, ack, { task_id: taskId });
      return 0;
    },
  };
}

const update: Command = {
  path: ["task", "update"],
  summary: "report progress (assignee only)",
  usage: "task update --session <id> --progress <30%|0.3> [--message <text>]",
  flags: [
    SESSION,
    { name: "progress", type: "string", value: "<n>", description: "how far along: 30%, 0.3 (a number above 1 is read as a percentage)" },
    { name: "message", type: "string", value: "<text>", description: "what happened since the last update" },
    { name: "status", type: "string", value: "<text>", description: "free-form status (default in_progress)" },
    TASK_ID,
  ],
  examples: ['baton --as agent://etl/worker-7 task update --session $SID --progress 30% --message "January done"'],
  async run(ctx) {
    noPositionals(ctx);
    const progress = parseProgress(ctx.flags.required("progress"));
    const s = await attach(ctx);
    const ack = await s.update({
      ...taskIdOpt(ctx),
      progress,
      message: ctx.flags.str("message") ?? "",
      ...(ctx.flags.str("status") ? { status: ctx.flags.str("status") } : {}),
      signal: ctx.signal,
    });
    ctx.reportAck(`update ${percent(progress)}`, ack, { progress });
    return 0;
  },
};

const complete: Command = {
  path: ["task", "complete"],
  summary: "report the task done, with its output (assignee only)",
  usage: "task complete --session <id> [--summary <text>] [--output <text> | --output-file <path>]",
  flags: [
    SESSION,
    { name: "summary", type: "string", value: "<text>", description: "one-line result" },
    { name: "output", type: "string", value: "<text>", description: "output, inline" },
    { name: "output-file", type: "string", value: "<path>", description: "output from a file (max 1 MiB)" },
    TASK_ID,
  ],
  async run(ctx) {
    noPositionals(ctx);
    const output = blob(ctx, "output");
    const s = await attach(ctx);
    const ack = await s.complete({
      ...taskIdOpt(ctx),
      summary: ctx.flags.str("summary") ?? "",
      ...(output !== undefined ? { output } : {}),
      signal: ctx.signal,
    });
    ctx.reportAck("complete", ack);
    return 0;
  },
};

const fail: Command = {
  path: ["task", "fail"],
  summary: "report that the task failed (assignee only)",
  usage: "task fail --session <id> [--error-code <code>] [--reason <text>] [--retryable]",
  flags: [
    SESSION,
    { name: "error-code", type: "string", value: "<code>", description: "machine-readable failure code" },
    REASON,
    { name: "retryable", type: "boolean", description: "a retry (in a new session) may succeed" },
    TASK_ID,
  ],
  async run(ctx) {
    noPositionals(ctx);
    const s = await attach(ctx);
    const ack = await s.fail({
      ...taskIdOpt(ctx),
      errorCode: ctx.flags.str("error-code") ?? "",
      reason: ctx.flags.str("reason") ?? "",
      retryable: ctx.flags.bool("retryable"),
      signal: ctx.signal,
    });
    ctx.reportAck(`fail${ctx.flags.bool("retryable") ? " (retryable)" : ""}`, ack);
    return 0;
  },
};

const commit: Command = {
  path: ["task", "commit"],
  summary: "record the final outcome and resolve the session",
  usage: "task commit --session <id> [--action task.completed|task.failed|…] [--reason <text>]",
  description:
    "Sends the terminal Commitment. Without --action it is task.completed after a TaskComplete and task.failed after a " +
    "TaskFail; outcome_positive is inferred from the action unless --outcome is given.",
  flags: COMMIT_FLAGS.map((f) =>
    f.name === "session"
      ? SESSION
      : f.name === "authority-scope"
        ? { ...f, description: "scope of authority (default: the task title)" }
        : f,
  ),
  async run(ctx) {
    noPositionals(ctx);
    const s = await attach(ctx);
    const action = ctx.flags.str("action") ?? s.suggestedAction();
    if (action === undefined)
      throw new UsageError("the task has not completed or failed yet; pass --action to commit anyway", ctx.command.path);
    const report = s.projection.terminalReport();
    const defaultReason =
      report?.kind === "complete"
        ? `completed by ${report.assignee}${report.summary ? `: ${report.summary}` : ""}`
        : report?.kind === "fail"
          ? `failed at ${report.assignee}${report.reason ? `: ${report.reason}` : ""}`
          : action;
    const outcomePositive = outcomeFlag(ctx);
    const ack = await s.commit({
      action,
      reason: ctx.flags.str("reason") ?? defaultReason,
      authorityScope: ctx.flags.str("authority-scope") ?? (s.projection.task?.title || "task"),
      ...(outcomePositive !== undefined ? { outcomePositive } : {}),
      signal: ctx.signal,
    });
    ctx.reportAck(`commit ${action}`, ack, { action });
    return 0;
  },
};

export const taskCommands: Command[] = [request, respond("accept"), respond("reject"), update, complete, fail, commit];
