// The player's narration: one line per step in plain words, the line that
// sums up each session at the end, and the text helpers they use.
import type { DemoStep } from "./types";
import type { SessionOutcome } from "./outcomes";
import { substitute, type LiveSession } from "./steps";

/** "agent://oncall/alice" → "alice". */
export function shortName(id: string): string {
  const tail = id.split("/").filter(Boolean).pop();
  return tail ?? id;
}

export function wrapText(text: string, indent: string, width = 92): string[] {
  const words = text.replace(/\s+/g, " ").trim().split(" ");
  const lines: string[] = [];
  let cur = "";
  for (const w of words) {
    if (cur !== "" && indent.length + cur.length + 1 + w.length > width) {
      lines.push(indent + cur);
      cur = w;
    } else cur = cur === "" ? w : `${cur} ${w}`;
  }
  if (cur) lines.push(indent + cur);
  return lines;
}

export function humanDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
  return `${Math.round(ms / 1000)}s`;
}

export function describeStep(step: DemoStep, live: LiveSession | undefined, sessions: ReadonlyMap<string, LiveSession>): string {
  const who = shortName(step.actor);
  switch (step.action) {
    case "start": {
      const a = step.args;
      const policy = a.policy ? `, policy ${a.policy}` : "";
      return `${who} starts a ${a.mode} session "${substitute(a.intent, sessions)}" with ${a.participants.map(shortName).join(", ")}${policy}`;
    }
    case "offer":
      return `${who} offers ${step.args.handoffId} to ${shortName(step.args.to)}: ${step.args.scope}`;
    case "context": {
      const a = step.args;
      const what = a.file ?? (a.json ? "a JSON note" : "a note");
      return `${who} attaches ${what} to ${a.handoffId ?? "the offer"}`;
    }
    case "accept":
      return live?.mode === "task"
        ? `${who} accepts task ${step.args?.taskId ?? ""}`.trimEnd()
        : `${who} accepts ${step.args?.handoffId ?? "the offer"}${step.args?.reason ? `: "${step.args.reason}"` : ""}`;
    case "decline":
      return `${who} declines ${step.args?.handoffId ?? "the offer"}${step.args?.reason ? `: "${step.args.reason}"` : ""}`;
    case "request":
      return `${who} asks ${step.args.to ? shortName(step.args.to) : "any participant"} to "${step.args.title}" (${step.args.taskId})`;
    case "reject":
      return `${who} rejects the task${step.args?.reason ? `: "${step.args.reason}"` : ""}`;
    case "update":
      return `${who} reports ${Math.round(step.args.progress * 100)}%${step.args.message ? `: ${step.args.message}` : ""}`;
    case "complete":
      return `${who} completes the task: ${step.args.summary}`;
    case "fail":
      return `${who} reports failure ${step.args.errorCode}${step.args.retryable ? " (retryable)" : ""}: ${step.args.reason}`;
    case "commit":
      return `${who} commits ${step.args?.action ?? "the outcome"}`;
    case "cancel":
      return `${who} cancels the session`;
    case "wait":
      return `${humanDuration(step.args.ms)} pass`;
  }
}

export function describeOutcome(o: SessionOutcome): string {
  const phase = o.handoff?.phase ?? o.task?.phase ?? "?";
  const c = o.commitment;
  const commit = c ? `${c.action} (${c.outcomePositive ? "positive" : "negative"}) by ${shortName(c.sender)}` : "no commitment";
  let mode = "";
  if (o.handoff) {
    mode = o.handoff.offers.map((r) => `${r.handoffId}→${shortName(r.target)} ${r.status}`).join(", ");
  } else if (o.task?.task) {
    const tk = o.task.task;
    const pct = tk.latestProgress === undefined ? "" : ` ${Math.round(tk.latestProgress * 100)}%`;
    mode = `${tk.taskId} ${tk.status}${pct}${o.task.isRetryable() ? " (retryable)" : ""}`;
  }
  const alias = o.alias === "main" ? "" : `${o.alias} `;
  return `${alias}session ${o.sessionId}: ${o.state} · ${commit} · phase ${phase}${mode ? ` · ${mode}` : ""} · ${o.events.length} events`;
}
