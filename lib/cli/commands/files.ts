// `baton files offer|list|accept|complete|fail|reject|reoffer|show|watch|bridge`:
// v0.1 file-based handoffs (one JSON file per handoff in .handoffs/ or
// $HANDOFF_DIR), with the reference CLI's arguments, Baton's lock and
// compare-and-swap writes, live watching and the bridge to MACP.
//
// This file holds the commands that read or write one handoff; the shared
// flags and printing are in files-common.ts, watch and bridge in
// files-live.ts.

import { HandoffError } from "@/lib/handoff-files/errors";
import type { HandoffAction } from "@/lib/handoff-files";
import { UsageError, type FlagDef } from "../args";
import type { Command, CommandContext } from "../command";
import { fields, table } from "../format";
import {
  AGENT,
  CONTEXT,
  DIR,
  clip,
  contextPairs,
  directory,
  handoffJson,
  invalidJson,
  load,
  onePositional,
  reportWrite,
  short,
  who,
} from "./files-common";
import { bridge, watch } from "./files-live";

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
    if (description.trim() === "") throw new UsageError("what is the work? give a description in quotes", ctx.command.path);
    const to = ctx.flags.str("to");
    const id = ctx.flags.str("id");
    const r = await (
      await directory(ctx)
    ).offer({
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
    if (status !== undefined && !isHandoffStatus(status))
      throw new UsageError(`--status must be one of ${HANDOFF_STATUSES.join(", ")}`, ctx.command.path);
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
      ...flagged.map(([h, p]) => ({
        name: h.name,
        path: h.path,
        reason: p as string,
        json: { file: h.path, valid: false, reason: p, problems: [{ code: "illegal-transition", message: p }] },
      })),
    ];
    if (ctx.json) {
      ctx.printJson({
        dir: hd.dir,
        exists: !missing,
        handoffs: handoffs.map(handoffJson),
        invalid: invalid.map((i) => i.json),
        truncated: r.truncated,
      });
      return 0;
    }
    if (handoffs.length === 0)
      ctx.out(`no ${status ?? ""}${status ? " " : ""}handoffs in ${hd.dir}${missing ? " (the directory does not exist yet)" : ""}\n`);
    else {
      const rows = handoffs.map((h) => [
        short(h.record.task_id),
        h.record.status,
        h.record.from_agent,
        who(h.record.to_agent),
        h.record.updated_at,
        clip(h.record.description, 60),
      ]);
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
          ? {
              valid: recorded === undefined,
              ...(recorded !== undefined ? { reason: recorded } : {}),
              handoff: handoffJson(s),
              read_only: s.viaSymlink,
            }
          : { valid: false, ...invalidJson(s) },
      );
      return 0;
    }
    if (!s.valid) {
      ctx.out(
        fields([
          ["file", s.path],
          ["valid", `no: ${s.reason}`],
        ]),
      );
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

function action(
  kind: HandoffAction["kind"],
  verb: string,
  summary: string,
  usage: string,
  flags: FlagDef[],
  build: ActionBuilder,
  description?: string,
): Command {
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
    [
      { name: "to", type: "string", value: "<agent>", description: "who should take it now (default: anyone)" },
      { ...AGENT, description: "who re-offers it (checked against from_agent)" },
      CONTEXT,
    ],
    (ctx) => {
      const to = ctx.flags.str("to");
      return { kind: "reoffer", ...optionalAgent(ctx), ...(to !== undefined ? { to } : {}), context: contextPairs(ctx) };
    },
    WRITE_NOTE,
  ),
];

export const filesCommands: Command[] = [offer, list, show, ...actions, watch, bridge];
