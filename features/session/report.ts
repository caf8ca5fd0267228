// The readable handover report: a session as Markdown for people (what was
// handed from whom to whom and when, the runbook text, every decision with
// its reason, the commitment, and who acted, person or agent). Pure: built
// from the folded view and the events, with display names from the console's
// directory. Times are UTC ISO-8601.

import { decodeUtf8, mediaTypeOf } from "@/lib/views/content";
import { describeEvent, type NameOf } from "@/lib/views/event-details";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import type { ActorKind } from "@/lib/views/directory";
import { formatCount } from "@/lib/views/format";

export interface ReportInput {
  sessionId: string;
  view: SessionView;
  events: readonly SessionEvent[];
  nameOf: NameOf;
  kindOf: (participantId: string) => ActorKind;
  /**
   * At most this many rows in "Every step" (the newest are dropped and the
   * report says how many): a printed page of a 20,000-event task stays
   * readable. Unset: every event.
   */
  maxSteps?: number;
}

const iso = (ms: number | undefined): string => (ms !== undefined && ms > 0 ? new Date(ms).toISOString() : "unknown time");

/** Text on one line, safe inside a Markdown table cell. */
function cell(s: string): string {
  return s.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

/** A fence longer than any backtick run in the text, so the text is shown verbatim. */
function fenced(text: string, info: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${info}\n${text.replace(/\n$/, "")}\n${fence}`;
}

function quote(s: string): string {
  return `“${s.replace(/\s+/g, " ").trim()}”`;
}

export function handoverReport({ sessionId, view, events, nameOf, kindOf, maxSteps }: ReportInput): string {
  const who = (id: string): string => (id ? `${nameOf(id)} (${kindOf(id)}, \`${id}\`)` : "the runtime");
  const lines: string[] = [];
  const title = view.intent || `Session ${sessionId}`;
  lines.push(`# Handover report: ${title.replace(/\n/g, " ")}`, "");
  lines.push(
    `- Session: \`${sessionId}\` (${view.mode === TASK_MODE ? "task" : view.mode === HANDOFF_MODE ? "handoff" : view.mode || "unknown mode"})`,
  );
  lines.push(`- Started: ${iso(view.startedAt)} by ${who(view.initiator)}`);
  lines.push(`- State: ${view.lifecycle}, ${view.phase}`);
  if (view.participants.length > 0) lines.push(`- Participants: ${view.participants.map((p) => who(p)).join(", ")}`);
  lines.push("");

  const c = view.commitment;
  if (view.handoff) {
    const offers = view.handoff.offers;
    const accepted = offers.find((o) => o.status === "accepted");
    lines.push("## Outcome", "");
    if (c && c.outcomePositive && accepted) {
      lines.push(
        `${nameOf(view.initiator)} handed **${accepted.scope || view.scope || view.intent}** to **${nameOf(accepted.target)}**; committed ${iso(c.timestampMs)}.`,
      );
    } else if (c) {
      lines.push(`${nameOf(view.initiator)} keeps **${view.scope || view.intent}** (negative outcome); committed ${iso(c.timestampMs)}.`);
    } else {
      lines.push(`Not committed yet (${view.phase}).`);
    }
    lines.push("");
    offers.forEach((o, i) => {
      const status = o.status === "accepted" ? "accepted" : o.status === "declined" ? "declined" : "not answered";
      lines.push(`## Offer ${i + 1}: ${nameOf(o.offeredBy)} → ${nameOf(o.target)} (${status})`, "");
      lines.push(`- Scope: ${o.scope || view.intent}`);
      lines.push(`- Offered ${iso(o.offeredAt)} by ${who(o.offeredBy)} to ${who(o.target)}`);
      if (o.reason) lines.push(`- Reason: ${quote(o.reason)}`);
      if (o.status === "accepted" || o.status === "declined") {
        const by = o.acceptedBy ?? o.declinedBy ?? o.target;
        lines.push(
          `- ${o.status === "accepted" ? "Accepted" : "Declined"} ${iso(o.respondedAt)} by ${who(by)}${o.responseReason ? `: ${quote(o.responseReason)}` : ""}`,
        );
      }
      lines.push("");
      for (const ctx of o.contexts) {
        const type = mediaTypeOf(ctx.contentType) || "untyped";
        lines.push(
          `### ${type === "text/markdown" ? "Runbook" : "Context"} (${type}), attached ${iso(ctx.timestampMs)} by ${who(ctx.sender)}${ctx.late ? " (after the answer)" : ""}`,
          "",
        );
        const text = type.startsWith("text/") || type === "application/json" || type === "untyped" ? decodeUtf8(ctx.context) : undefined;
        lines.push(
          text !== undefined
            ? fenced(text, type === "text/markdown" ? "markdown" : "")
            : `Binary content, ${ctx.context.byteLength} bytes (not included).`,
          "",
        );
      }
    });
  }

  const task = view.task?.task;
  if (view.task) {
    lines.push("## Task", "");
    if (!task) lines.push("No task was requested.", "");
    else {
      lines.push(`- Title: ${task.title || "(untitled)"}`);
      lines.push(
        `- Requested ${iso(task.requestedAt)} by ${who(task.requester)} from ${task.requestedAssignee ? who(task.requestedAssignee) : "any participant"}`,
      );
      if (task.instructions) lines.push("", "Instructions:", "", fenced(task.instructions, ""));
      for (const r of task.rejections)
        lines.push(`- Turned down ${iso(r.timestampMs)} by ${who(r.assignee)}${r.reason ? `: ${quote(r.reason)}` : ""}`);
      if (task.activeAssignee) lines.push(`- Taken by ${who(task.activeAssignee)}`);
      const rep = task.terminalReport;
      if (rep?.kind === "complete")
        lines.push(
          `- Completed ${iso(rep.timestampMs)} by ${who(rep.assignee || rep.sender)}${rep.summary ? `: ${quote(rep.summary)}` : ""}`,
        );
      if (rep?.kind === "fail")
        lines.push(
          `- Failed ${iso(rep.timestampMs)} by ${who(rep.assignee || rep.sender)}${rep.errorCode ? ` (${rep.errorCode}${rep.retryable ? ", retryable" : ""})` : ""}${rep.reason ? `: ${quote(rep.reason)}` : ""}`,
        );
      lines.push("");
    }
  }

  lines.push("## Commitment", "");
  if (c) {
    lines.push(`- Action: \`${c.action}\` (${c.outcomePositive ? "positive" : "negative"} outcome)`);
    lines.push(`- Authority scope: ${c.authorityScope || "—"}`);
    if (c.reason) lines.push(`- Reason: ${quote(c.reason)}`);
    lines.push(`- Committed ${iso(c.timestampMs)} by ${who(c.sender)}`);
  } else {
    lines.push("None yet.");
  }
  lines.push("");

  lines.push("## Every step", "", "| # | Time (UTC) | Who | What | Reason |", "| --- | --- | --- | --- | --- |");
  const shown = maxSteps !== undefined && events.length > maxSteps ? events.slice(0, Math.max(0, maxSteps)) : events;
  for (const e of shown) {
    const d = describeEvent(e, nameOf);
    const sender = e.envelope.sender;
    const actor = sender ? `${nameOf(sender)} (${kindOf(sender)})` : "runtime";
    const t = Number(e.envelope.timestampUnixMs) || e.receivedAtMs;
    lines.push(`| ${e.sequence ?? ""} | ${iso(t)} | ${cell(actor)} | ${cell(d.summary)} | ${cell(d.reason ?? "")} |`);
  }
  if (shown.length < events.length) {
    const more = events.length - shown.length;
    lines.push(
      "",
      `…and ${formatCount(more)} later ${more === 1 ? "step" : "steps"} not listed here: the Markdown, JSON and NDJSON exports hold every one.`,
    );
  }
  return `${lines.join("\n")}\n`;
}
