// The bodies and headers of outbound notifications: a generic JSON body
// signed with HMAC-SHA256, and a Slack incoming-webhook body. Pure.
import { createHmac } from "node:crypto";
import type { EventKind, NotifyEvent } from "./events";

/** `sha256=<hex HMAC-SHA256 of the raw body under the hook's secret>`. */
export function signBody(secret: string | Uint8Array, body: string | Uint8Array): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** The session page, from the console's public URL. */
export function sessionLink(publicUrl: string, sessionId: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/sessions/${encodeURIComponent(sessionId)}`;
}

export interface GenericBody {
  event: EventKind;
  session_id: string;
  mode: string;
  intent: string;
  scope: string;
  from: string;
  to: string[];
  waiting_on: string[];
  outcome: string;
  /** task.reported: "completed" | "failed". */
  detail: string;
  occurred_at: string;
  url: string;
  /** Display names of the people and agents named above, when known. */
  names: Record<string, string>;
}

type NameOf = (id: string) => string | undefined;

export function genericBody(event: NotifyEvent, publicUrl: string, nameOf: NameOf): string {
  const names: Record<string, string> = {};
  for (const id of [event.from, ...event.to, ...event.waitingOn]) {
    const n = id ? nameOf(id) : undefined;
    if (n) names[id] = n;
  }
  const body: GenericBody = {
    event: event.kind,
    session_id: event.sessionId,
    mode: event.mode,
    intent: event.intent,
    scope: event.scope,
    from: event.from,
    to: event.to,
    waiting_on: event.waitingOn,
    outcome: event.outcome,
    detail: event.detail,
    occurred_at: new Date(event.occurredAtMs > 0 ? event.occurredAtMs : Date.now()).toISOString(),
    url: sessionLink(publicUrl, event.sessionId),
    names,
  };
  return JSON.stringify(body);
}

/** Slack mrkdwn: &, < and > are control characters. */
export function slackEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function people(ids: readonly string[], nameOf: NameOf): string {
  const names = ids.map((id) => nameOf(id) ?? id);
  if (names.length === 0) return "nobody";
  if (names.length === 1) return names[0] as string;
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** One sentence a person on call reads: who asks what of whom. */
export function sentence(event: NotifyEvent, nameOf: NameOf): string {
  const from = nameOf(event.from) ?? (event.from || "someone");
  const to = people(event.to, nameOf);
  const what = event.scope || event.intent || "the session";
  switch (event.kind) {
    case "offer.waiting":
      return `${from} offered ${what} to ${to}: waiting for an answer`;
    case "offer.escalated":
      return `${from}'s offer of ${what} to ${people(event.waitingOn, nameOf)} is unanswered${event.detail ? ` (${event.detail})` : ""}: escalated to ${to}`;
    case "offer.declined":
      return `${from} declined ${what}: ${to} may re-offer or cancel`;
    case "offer.accepted":
      return `${from} accepted ${what}`;
    case "approval.upcoming":
      return `${from} offered ${what} to ${people(event.waitingOn, nameOf)}: ${to} approve${event.to.length === 1 ? "s" : ""} once they answer`;
    case "approval.needed":
      return `${from}'s handoff of ${what} needs approval from ${to}`;
    case "session.committed":
      return `${what}: committed${event.outcome ? ` (${event.outcome})` : ""}`;
    case "session.expired":
      return `${what}: expired before it was settled`;
    case "session.cancelled":
      return `${what}: cancelled`;
    case "task.assigned":
      return `${from} asked ${to} to do ${what}`;
    case "task.reported":
      return `${from} reported ${what} ${event.detail || "done"}`;
  }
}

export function slackBody(event: NotifyEvent, publicUrl: string, nameOf: NameOf): string {
  const text = sentence(event, nameOf);
  const url = sessionLink(publicUrl, event.sessionId);
  const lines = [`*${slackEscape(text)}*`];
  if (event.intent && event.intent !== event.scope) lines.push(slackEscape(event.intent));
  if (event.waitingOn.length > 0) lines.push(`Waiting on: ${slackEscape(people(event.waitingOn, nameOf))}`);
  return JSON.stringify({
    text: `${slackEscape(text)} <${url}|Open in Baton>`,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: lines.join("\n") } },
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: "Open session" }, url }],
      },
    ],
  });
}
