// What the `baton files …` commands share: loading the handoff library
// lazily, the --dir/--agent/--context flags, the directory with Baton's
// history, and how handoffs and writes are printed.
import fs from "node:fs";
import path from "node:path";
import type { HandoffDirectory, Snapshot, SqliteHistoryStore, ValidSnapshot, WriteResult } from "@/lib/handoff-files";
import { UsageError, type FlagDef } from "../args";
import { Refusal, type CommandContext } from "../command";

// The library (ajv, SQLite, the bridge) loads when a files command runs, so other commands start as fast as before.
export const load = () => import("@/lib/handoff-files");

export const DIR: FlagDef = {
  name: "dir",
  type: "string",
  value: "<path>",
  description: "the handoff directory (default $HANDOFF_DIR, else .handoffs)",
};
export const AGENT: FlagDef = { name: "agent", type: "string", value: "<agent>", description: "who is acting (checked against to_agent)" };
export const CONTEXT: FlagDef = { name: "context", type: "multi", value: "<key=value>", description: "add a context entry (repeatable)" };

/**
 * The handoff directory of --dir / $HANDOFF_DIR. When Baton's history store
 * exists ($BATON_DATA_DIR/handoff-files.sqlite, kept by the console, the
 * bridge or `files watch --record`), files it recorded as an illegal step are
 * shown as invalid and refused too.
 */
export async function directory(ctx: CommandContext): Promise<HandoffDirectory> {
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

export function contextPairs(ctx: CommandContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of ctx.flags.list("context")) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`--context takes key=value, got "${item}"`, ctx.command.path);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1);
  }
  return out;
}

export function onePositional(ctx: CommandContext, what: string): string {
  if (ctx.args.length !== 1) {
    throw new UsageError(
      ctx.args.length === 0 ? `which handoff? give its ${what}` : `unexpected argument ${ctx.args[1]}`,
      ctx.command.path,
    );
  }
  return ctx.args[0] as string;
}

export const short = (id: string) => (id.length > 8 ? id.slice(0, 8) : id);
export const who = (agent: string) => agent || "anyone";

export function clip(text: string, n: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > n ? `${line.slice(0, n - 1)}…` : line;
}

export function handoffJson(s: ValidSnapshot): Record<string, unknown> {
  return { file: s.path, ...s.document };
}

export function invalidJson(s: Snapshot): Record<string, unknown> {
  return s.valid ? handoffJson(s) : { file: s.path, valid: false, reason: s.reason, problems: s.problems };
}

/** Print the outcome of a write; a write replaced right after by a writer that ignores the lock is a refusal. */
export function reportWrite(ctx: CommandContext, verb: string, r: WriteResult): number {
  const rec = r.snapshot.record;
  if (r.replacedBy !== undefined) {
    const now =
      r.replacedBy === null
        ? "the file is gone"
        : r.replacedBy.valid
          ? `it says ${r.replacedBy.record.status} now`
          : `it is no longer valid (${r.replacedBy.reason})`;
    throw new Refusal(
      `${rec.task_id} was ${verb}, but a writer that ignores ${path.basename(r.snapshot.path)}.lock replaced the file right after: ${now}`,
    );
  }
  if (ctx.json) {
    ctx.printJson({
      ok: true,
      task_id: rec.task_id,
      status: rec.status,
      previous_status: r.previous?.record.status ?? null,
      handoff: handoffJson(r.snapshot),
    });
  } else {
    const by = rec.status === "accepted" || rec.status === "rejected" ? ` by ${rec.to_agent}` : "";
    ctx.out(`✓ ${rec.task_id} ${verb}${by}${r.previous ? ` (was ${r.previous.record.status})` : ""}\n`);
  }
  return 0;
}

/** Wait for Ctrl-C. The watchers' handles do not keep the process alive on their own, this does. */
export async function untilInterrupted(ctx: CommandContext): Promise<void> {
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
