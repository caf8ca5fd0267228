// `baton sessions list|watch|show|cancel|suspend|resume`

import { Code, ConnectError } from "@connectrpc/connect";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { formatBytes } from "@/lib/agent/content";
import type { SequencedEnvelope } from "@/lib/agent";
import { sleep } from "@/lib/base/abort";
import { viewFromEvents, type SessionView } from "@/lib/macp/projections/session";
import { toCanonicalMessage } from "@/lib/macp/transcript";
import { UsageError } from "../args";
import type { Command, CommandContext } from "../command";
import {
  eventName,
  fields,
  formatClock,
  formatDuration,
  formatTime,
  lifecycleJson,
  metadataJson,
  modeId,
  percent,
  shortMode,
  stateName,
  summarizeEnvelope,
  table,
} from "../format";

function sessionArg(ctx: CommandContext): string {
  const id = ctx.args[0] ?? ctx.flags.str("session");
  if (id === undefined || id.trim() === "") throw new UsageError("which session? give its id", ctx.command.path);
  if (ctx.args.length > 1) throw new UsageError(`unexpected argument ${ctx.args[1]}`, ctx.command.path);
  return id;
}

function stateFilter(text: string | undefined, path: readonly string[]): SessionState | undefined {
  if (text === undefined) return undefined;
  const key = `SESSION_STATE_${text.trim().toUpperCase()}`;
  const v = (SessionState as unknown as Record<string, number | undefined>)[key];
  if (v === undefined) throw new UsageError(`--state must be one of open, resolved, expired, suspended, cancelled`, path);
  return v as SessionState;
}

const list: Command = {
  path: ["sessions", "list"],
  summary: "list the sessions the runtime holds",
  usage: "sessions list [--mode handoff|task] [--state open|resolved|…]",
  flags: [
    { name: "mode", type: "string", value: "<mode>", description: "only this mode (handoff, task or a mode id)" },
    { name: "state", type: "string", value: "<state>", description: "only sessions in this state" },
  ],
  examples: ["baton --as agent://ops sessions list --state open"],
  async run(ctx) {
    const mode = ctx.flags.str("mode");
    const state = stateFilter(ctx.flags.str("state"), ctx.command.path);
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    let sessions = await ctx.client().listSessions({ signal: ctx.signal });
    if (mode !== undefined) sessions = sessions.filter((s) => s.mode === modeId(mode));
    if (state !== undefined) sessions = sessions.filter((s) => s.state === state);
    sessions.sort((a, b) => Number(b.startedAtUnixMs - a.startedAtUnixMs));
    if (ctx.json) {
      ctx.printJson({ sessions: sessions.map(metadataJson) });
      return 0;
    }
    if (sessions.length === 0) {
      ctx.out("No sessions.\n");
      return 0;
    }
    ctx.out(
      table(
        ["SESSION", "MODE", "STATE", "INITIATOR", "PARTICIPANTS", "STARTED", "EXPIRES"],
        sessions.map((s) => [
          s.sessionId,
          shortMode(s.mode),
          stateName(s.state),
          s.initiator,
          s.participants.join(", "),
          formatTime(s.startedAtUnixMs),
          formatTime(s.expiresAtUnixMs),
        ]),
      ),
    );
    return 0;
  },
};

const watch: Command = {
  path: ["sessions", "watch"],
  summary: "stream session lifecycle events live, until Ctrl-C",
  usage: "sessions watch [--mode handoff|task]",
  description:
    "Prints one line per session the runtime already holds (as CREATED, with its current state), then one line per " +
    "transition as it happens: CREATED, RESOLVED, EXPIRED, SUSPENDED, RESUMED, CANCELLED. With --json, one JSON object per line.",
  flags: [{ name: "mode", type: "string", value: "<mode>", description: "only this mode" }],
  async run(ctx) {
    const mode = ctx.flags.str("mode");
    if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
    const client = ctx.client();
    if (!ctx.json) ctx.err(`Watching sessions on ${client.baseUrl} (Ctrl-C to stop)\n`);
    const widths = [8, 9, 36, 7, 9];
    if (!ctx.json)
      ctx.out(
        [
          "TIME".padEnd(widths[0] ?? 0),
          "EVENT".padEnd(widths[1] ?? 0),
          "SESSION".padEnd(widths[2] ?? 0),
          "MODE".padEnd(widths[3] ?? 0),
          "STATE".padEnd(widths[4] ?? 0),
          "INITIATOR",
        ].join("  ") + "\n",
      );
    // Lifecycle streams are lossy by design (a slow watcher is ended, §8.2): on
    // any end other than Ctrl-C, reconnect; the runtime re-sends its snapshot.
    let connectedOnce = false;
    let backoffMs = 500;
    while (!ctx.signal.aborted) {
      try {
        for await (const ev of client.watchSessions({ signal: ctx.signal })) {
          connectedOnce = true;
          backoffMs = 500;
          const s = ev.session;
          if (!s) continue;
          if (mode !== undefined && s.mode !== modeId(mode)) continue;
          if (ctx.json) {
            ctx.out(`${JSON.stringify(lifecycleJson(ev))}\n`);
            continue;
          }
          ctx.out(
            [
              formatClock(ev.observedAtUnixMs).padEnd(widths[0] ?? 0),
              eventName(ev.eventType).padEnd(widths[1] ?? 0),
              s.sessionId.padEnd(widths[2] ?? 0),
              shortMode(s.mode).padEnd(widths[3] ?? 0),
              stateName(s.state).padEnd(widths[4] ?? 0),
              s.initiator,
            ].join("  ") + "\n",
          );
        }
        if (ctx.signal.aborted) break;
        ctx.err("(the runtime ended the watch stream; reconnecting)\n");
        await sleep(250, ctx.signal);
      } catch (e) {
        // Refusals and a runtime that was never reachable end the command.
        if (!connectedOnce || !(e instanceof ConnectError) || e.code !== Code.Unavailable) throw e;
        ctx.err(`(lost the runtime: ${e.rawMessage}; retrying in ${Math.round(backoffMs / 1000)}s)\n`);
        await sleep(backoffMs, ctx.signal);
        backoffMs = Math.min(backoffMs * 2, 10_000);
      }
    }
    return 0;
  },
};

function eventRow(ev: SequencedEnvelope): string[] {
  const env = ev.envelope;
  return [String(ev.sequence), formatClock(env.timestampUnixMs), env.sender, env.messageType, summarizeEnvelope(env)];
}

function describeView(meta: SessionMetadata, view: SessionView): string {
  let out = fields([
    ["Session", meta.sessionId],
    ["Mode", `${shortMode(meta.mode)} (${meta.mode})`],
    ["State", `${stateName(meta.state)}, phase ${view.phase}`],
    ["Intent", view.intent || "-"],
    ["Initiator", meta.initiator],
    ["Participants", meta.participants.join(", ")],
    ["Policy", meta.policyVersion],
    ["Started", formatTime(meta.startedAtUnixMs)],
    ["Expires", `${formatTime(meta.expiresAtUnixMs)} (ttl ${formatDuration(view.ttlMs)})`],
    ...(view.currentOwner ? ([["Owner", view.currentOwner]] as [string, string][]) : []),
    ...(view.commitment
      ? ([
          [
            "Outcome",
            `${view.commitment.action} (${view.commitment.outcomePositive ? "positive" : "negative"}) by ${view.commitment.sender}: ${view.commitment.reason}`,
          ],
        ] as [string, string][])
      : []),
  ]);
  const h = view.handoff;
  if (h && h.offers.length) {
    out += "\nOffers\n";
    out += table(
      ["ID", "TARGET", "STATUS", "SCOPE", "CONTEXT"],
      h.offers.map((o) => [
        o.handoffId,
        o.target,
        o.status,
        o.scope || "-",
        o.contexts.length ? o.contexts.map((c) => `${c.contentType || "untyped"} ${formatBytes(c.context.byteLength)}`).join("; ") : "-",
      ]),
      "  ",
    );
  }
  const t = view.task?.task;
  if (t) {
    out += "\nTask\n";
    const report = t.terminalReport;
    out += fields(
      [
        ["Id", t.taskId],
        ["Title", t.title || "-"],
        ["Requested of", t.requestedAssignee || "any participant"],
        ["Assignee", t.activeAssignee ?? "-"],
        ["Status", t.status],
        ["Progress", percent(t.latestProgress)],
        ...(report?.kind === "complete" ? ([["Result", `completed: ${report.summary || "(no summary)"}`]] as [string, string][]) : []),
        ...(report?.kind === "fail"
          ? ([
              ["Result", `failed ${report.errorCode || ""}${report.retryable ? " (retryable)" : ""}: ${report.reason || "(no reason)"}`],
            ] as [string, string][])
          : []),
      ],
      "  ",
    );
  }
  return out;
}

const show: Command = {
  path: ["sessions", "show"],
  summary: "show one session: metadata, folded projection and its events",
  usage: "sessions show <session-id> [--follow]",
  description:
    "Reads the session's accepted history over a passive subscription and folds it with the same reducers the console " +
    "uses. With --json prints {metadata, projection, events}; events use the canonical MACP JSON mapping. With --follow, " +
    "keeps printing new events until Ctrl-C.",
  flags: [
    { name: "session", type: "string", value: "<id>", description: "the session (instead of the positional id)" },
    { name: "follow", type: "boolean", short: "f", description: "keep streaming new events until Ctrl-C" },
  ],
  async run(ctx) {
    const id = sessionArg(ctx);
    const client = ctx.client();
    const meta = await client.getSession(id, { signal: ctx.signal });
    const events = await client.history(id, { signal: ctx.signal });
    const view = viewFromEvents(events);
    if (ctx.json) {
      const { handoff, task, ...rest } = view;
      ctx.printJson({
        metadata: metadataJson(meta),
        projection: { ...rest, ...(handoff ? { handoff } : {}), ...(task ? { task } : {}) },
        events: events.map((e) => toCanonicalMessage(e)),
      });
    } else {
      ctx.out(describeView(meta, view));
      ctx.out("\nEvents\n");
      ctx.out(table(["SEQ", "TIME", "SENDER", "TYPE", "DETAILS"], events.map(eventRow), "  "));
    }
    if (!ctx.flags.bool("follow")) return 0;
    const last = events[events.length - 1]?.sequence ?? 0;
    if (!ctx.json) ctx.err("Following new events (Ctrl-C to stop)\n");
    for await (const ev of client.subscribe(id, last, { signal: ctx.signal })) {
      if (ctx.json) ctx.out(`${JSON.stringify(toCanonicalMessage(ev))}\n`);
      else ctx.out(`  ${eventRow(ev).join("  ")}\n`);
    }
    return 0;
  },
};

function control(op: "cancel" | "suspend" | "resume"): Command {
  const verb = { cancel: "cancel", suspend: "suspend", resume: "resume" }[op];
  return {
    path: ["sessions", op],
    summary: `${verb} a session (initiator or commitment authority)`,
    usage: `sessions ${op} <session-id> [--reason <text>]`,
    flags: [
      { name: "session", type: "string", value: "<id>", description: "the session (instead of the positional id)" },
      { name: "reason", type: "string", value: "<text>", description: "why, recorded with the annotation" },
    ],
    async run(ctx) {
      const id = sessionArg(ctx);
      const client = ctx.client();
      const reason = ctx.flags.str("reason") ?? "";
      const ack =
        op === "cancel"
          ? await client.cancelSession(id, reason, { signal: ctx.signal })
          : op === "suspend"
            ? await client.suspendSession(id, reason, { signal: ctx.signal })
            : await client.resumeSession(id, reason, { signal: ctx.signal });
      ctx.reportAck(`${verb} ${id}`, ack);
      return 0;
    },
  };
}

export const sessionCommands: Command[] = [list, watch, show, control("cancel"), control("suspend"), control("resume")];
