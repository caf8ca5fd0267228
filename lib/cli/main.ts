// The baton CLI: command registry, help, dispatch and exit codes.
//
// Exit codes: 0 success · 1 runtime unreachable or unexpected failure (also a
// demo that did not play as scripted) · 2 the runtime refused (MACP error
// code shown with its explanation) · 64 usage error · 130 interrupted.

import { Code, ConnectError } from "@connectrpc/connect";
import { codeForConnectError, explainError, MacpAckError, MacpError, MacpUsageError } from "@/lib/agent/errors";
import { Flags, suggest, tokenize, UsageError, type FlagDef } from "./args";
import { CommandContext, GLOBAL_FLAGS, readGlobals, Refusal, type Command, type Io } from "./command";
import { HandoffError, USAGE_KINDS } from "@/lib/handoff-files/errors";
import { demoCommand } from "./commands/demo";
import { filesCommands } from "./commands/files";
import { handoffCommands } from "./commands/handoff";
import { policyCommands } from "./commands/policy";
import { sessionCommands } from "./commands/sessions";
import { taskCommands } from "./commands/task";

export const EXIT = { ok: 0, failure: 1, rejected: 2, usage: 64, interrupted: 130 } as const;

export const COMMANDS: readonly Command[] = [
  ...sessionCommands,
  ...handoffCommands,
  ...taskCommands,
  ...policyCommands,
  ...filesCommands,
  demoCommand,
];

const GROUPS: readonly { name: string; summary: string }[] = [
  { name: "sessions", summary: "list, watch and inspect sessions; cancel, suspend, resume" },
  { name: "handoff", summary: "hand a responsibility over: start, offer, context, accept, decline, commit" },
  { name: "task", summary: "delegate one task: request, accept, reject, update, complete, fail, commit" },
  { name: "policy", summary: "governance policies: list, show, register, unregister" },
  { name: "files", summary: "v0.1 file-based handoffs: offer, list, accept, complete, fail, reject, reoffer, show, watch, bridge" },
  { name: "demo", summary: "play the protocol demos (list them with `baton demo list`)" },
];

function flagLines(defs: readonly FlagDef[]): string {
  const rows = defs.map((d) => [`${d.short ? `-${d.short}, ` : ""}--${d.name}${d.value ? ` ${d.value}` : ""}`, d.description] as const);
  const w = Math.max(...rows.map(([l]) => l.length));
  return rows.map(([l, d]) => `  ${l.padEnd(w)}  ${d}`).join("\n");
}

export function topHelp(): string {
  const w = Math.max(...GROUPS.map((g) => g.name.length));
  return (
    "baton: command line for MACP runtimes (handoffs, tasks, sessions, policies, demos)\n\n" +
    "Usage: baton [global options] <command> [options]\n\n" +
    "Commands:\n" +
    GROUPS.map((g) => `  ${g.name.padEnd(w)}  ${g.summary}`).join("\n") +
    "\n\nGlobal options:\n" +
    flagLines(GLOBAL_FLAGS) +
    "\n\nExamples:\n" +
    "  SID=$(baton --as agent://oncall/alice handoff start --participants agent://oncall/bob)\n" +
    '  baton --as agent://oncall/alice handoff offer --session $SID --to agent://oncall/bob --scope "payments on-call"\n' +
    "  baton --as agent://oncall/bob handoff accept --session $SID\n" +
    "  baton --as agent://oncall/alice sessions show $SID\n\n" +
    "Run `baton <command> --help` for details. Exit codes: 0 ok, 1 failure, 2 refused (by the runtime, or a lost race or illegal step on a handoff file), 64 usage.\n"
  );
}

function groupHelp(group: string): string {
  const cmds = COMMANDS.filter((c) => c.path[0] === group);
  const summary = GROUPS.find((g) => g.name === group)?.summary ?? "";
  const w = Math.max(...cmds.map((c) => c.path.join(" ").length));
  return (
    `baton ${group}: ${summary}\n\nCommands:\n` +
    cmds.map((c) => `  ${c.path.join(" ").padEnd(w)}  ${c.summary}`).join("\n") +
    `\n\nRun \`baton ${group} <command> --help\` for the options of each.\n`
  );
}

export function commandHelp(cmd: Command): string {
  let out = `baton ${cmd.path.join(" ")}: ${cmd.summary}\n\nUsage: baton [global options] ${cmd.usage}\n`;
  if (cmd.description) out += `\n${wrapPara(cmd.description)}\n`;
  if (cmd.flags.length) out += `\nOptions:\n${flagLines(cmd.flags)}\n`;
  out += `\nGlobal options:\n${flagLines(GLOBAL_FLAGS)}\n`;
  if (cmd.examples?.length) out += `\nExamples:\n${cmd.examples.map((e) => `  ${e}`).join("\n")}\n`;
  return out;
}

function wrapPara(text: string, width = 92): string {
  const words = text.split(/\s+/);
  const lines: string[] = [];
  let cur = "";
  for (const w of words) {
    if (cur && cur.length + 1 + w.length > width) {
      lines.push(cur);
      cur = w;
    } else cur = cur ? `${cur} ${w}` : w;
  }
  if (cur) lines.push(cur);
  return lines.join("\n");
}

/** Flags that take no value anywhere in the CLI (so the tokenizer never swallows the next word). */
const BOOLEAN_FLAGS = new Set<string>(
  [...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags)].filter((f) => f.type === "boolean").map((f) => f.name),
);
const SHORT_FLAGS: Record<string, string> = Object.fromEntries(
  [...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags)].filter((f) => f.short).map((f) => [f.short as string, f.name]),
);

/** Find the command named by the leading positionals. */
function resolve(positionals: readonly string[]): { cmd?: Command; group?: string; rest: string[] } {
  const [first, second] = positionals;
  if (first === undefined) return { rest: [] };
  const single = COMMANDS.find((c) => c.path.length === 1 && c.path[0] === first);
  if (single) return { cmd: single, rest: positionals.slice(1) };
  if (!GROUPS.some((g) => g.name === first)) return { rest: [...positionals] };
  const cmd = COMMANDS.find((c) => c.path[0] === first && c.path[1] === second);
  return cmd ? { cmd, rest: positionals.slice(2) } : { group: first, rest: positionals.slice(1) };
}

/** Run the CLI in-process. Never throws; returns the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let ctx: CommandContext | undefined;
  let json = argv.includes("--json");
  try {
    const raw = tokenize(argv, (n) => BOOLEAN_FLAGS.has(n), SHORT_FLAGS);
    const wantsHelp = raw.flags.some((f) => f.name === "help" && f.value === true);
    let positionals = raw.positionals;
    if (positionals[0] === "help") positionals = positionals.slice(1);
    const { cmd, group, rest } = resolve(positionals);
    const helpWord = raw.positionals[0] === "help";
    if (!cmd) {
      if (group !== undefined) {
        const sub = rest[0];
        if (sub === undefined) {
          io.stdout(groupHelp(group));
          return wantsHelp || helpWord ? EXIT.ok : EXIT.usage;
        }
        const known = COMMANDS.filter((c) => c.path[0] === group).map((c) => c.path[1] as string);
        const hint = suggest(sub, known);
        throw new UsageError(`unknown command "${group} ${sub}"${hint ? ` (did you mean "${group} ${hint}"?)` : ""}`, [group]);
      }
      if (positionals.length === 0) {
        io.stdout(topHelp());
        return wantsHelp || helpWord ? EXIT.ok : EXIT.usage;
      }
      const hint = suggest(
        positionals[0] ?? "",
        GROUPS.map((g) => g.name),
      );
      throw new UsageError(`unknown command "${positionals[0]}"${hint ? ` (did you mean "${hint}"?)` : ""}`);
    }
    if (wantsHelp || helpWord) {
      io.stdout(commandHelp(cmd));
      return EXIT.ok;
    }
    const flags = new Flags(raw.flags, [...GLOBAL_FLAGS, ...cmd.flags], cmd.path);
    const globals = readGlobals(flags, io.env);
    json = globals.json;
    ctx = new CommandContext(io, globals, flags, rest, cmd);
    if (cmd.needsIdentity !== false) ctx.auth(); // fail early and clearly when nobody is acting
    return await cmd.run(ctx);
  } catch (e) {
    return report(e, io, json, ctx);
  } finally {
    ctx?.close();
  }
}

function report(e: unknown, io: Io, json: boolean, ctx: CommandContext | undefined): number {
  const runtime = ctx?.globals.runtime;
  if (e instanceof UsageError || e instanceof MacpUsageError) {
    const path = e instanceof UsageError && e.command.length > 0 ? e.command : (ctx?.command.path ?? []);
    const where = path.length ? `baton ${path.join(" ")} --help` : "baton --help";
    if (json) io.stdout(`${JSON.stringify({ ok: false, error: { kind: "usage", message: e.message } }, null, 2)}\n`);
    io.stderr(`baton: ${e.message}\nRun \`${where}\` for usage.\n`);
    return EXIT.usage;
  }
  if (e instanceof MacpError || (e instanceof ConnectError && codeForConnectError(e) !== undefined && e.code !== Code.Canceled)) {
    const code = e instanceof MacpError ? e.code : (codeForConnectError(e as ConnectError) as string);
    const runtimeMessage = e instanceof MacpError ? e.runtimeMessage : (e as ConnectError).rawMessage;
    const explanation = explainError(code) ?? "The runtime reported an error code this client does not know.";
    const reasons = e instanceof MacpAckError ? e.reasons : [];
    if (json) {
      io.stdout(
        `${JSON.stringify({ ok: false, error: { code, message: runtimeMessage, explanation, ...(reasons.length ? { reasons } : {}) } }, null, 2)}\n`,
      );
    } else {
      io.stderr(`error: ${code}: ${explanation}\n  runtime said: ${runtimeMessage || "(no details)"}\n`);
      for (const r of reasons) io.stderr(`  reason: ${r}\n`);
    }
    return EXIT.rejected;
  }
  if (e instanceof HandoffError) {
    // Ambiguous prefixes and bad input are usage errors; everything else (a lost race, an illegal
    // transition, an invalid file, a busy lock) is a refusal, like the runtime's.
    if (USAGE_KINDS.has(e.kind)) {
      const path = ctx?.command.path ?? [];
      if (json) io.stdout(`${JSON.stringify({ ok: false, error: { kind: e.kind, message: e.message } }, null, 2)}\n`);
      io.stderr(`baton: ${e.message}\nRun \`baton ${path.length ? `${path.join(" ")} ` : ""}--help\` for usage.\n`);
      return EXIT.usage;
    }
    if (json) io.stdout(`${JSON.stringify({ ok: false, error: { kind: e.kind, message: e.message } }, null, 2)}\n`);
    else io.stderr(`error: ${e.message}\n`);
    return EXIT.rejected;
  }
  if (e instanceof Refusal) {
    if (json) io.stdout(`${JSON.stringify({ ok: false, error: { message: e.message } }, null, 2)}\n`);
    else io.stderr(`error: ${e.message}\n`);
    return EXIT.rejected;
  }
  if (e instanceof ConnectError) {
    if (e.code === Code.Canceled && io.signal.aborted) return EXIT.interrupted;
    const msg =
      e.code === Code.Unavailable
        ? `cannot reach the MACP runtime at ${runtime ?? "the configured address"}: ${e.rawMessage}\n` +
          "  Is it running? Start one with `npm run runtime`, or point --runtime / MACP_RUNTIME_URL at yours.\n"
        : `the runtime call failed (${Code[e.code]}): ${e.rawMessage}\n`;
    if (json)
      io.stdout(
        `${JSON.stringify({ ok: false, error: { kind: "transport", grpc_code: Code[e.code], message: e.rawMessage } }, null, 2)}\n`,
      );
    io.stderr(`error: ${msg}`);
    return EXIT.failure;
  }
  io.stderr(`baton: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return EXIT.failure;
}

/** Process entry used by bin/baton.mjs: wires stdout/stderr, env and Ctrl-C. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const ac = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      ac.abort();
      // A command that does not stop promptly is not waited for.
      setTimeout(() => process.exit(EXIT.interrupted), 3_000).unref();
    } else process.exit(EXIT.interrupted);
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  // `baton … | head`: a closed pipe ends the command quietly.
  const onPipeError = (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(EXIT.ok);
  };
  process.stdout.on("error", onPipeError);
  try {
    return await main(argv, {
      stdout: (t) => void process.stdout.write(t),
      stderr: (t) => void process.stderr.write(t),
      env: process.env,
      signal: ac.signal,
    });
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
  }
}
