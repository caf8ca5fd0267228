// Rendering for the baton CLI: aligned tables, times, short mode/state names,
// one-line summaries of envelopes, and JSON-safe conversion (bytes → base64,
// bigint → number) for --json output.

import { base64Encode } from "@bufbuild/protobuf/wire";
import type { SessionLifecycleEvent, SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import { formatBytes, isTextual } from "@/lib/agent/content";
import { formatDurationCli as formatDuration } from "@/lib/base/duration";

/** Render rows as left-aligned columns separated by two spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], indent = ""): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    indent +
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** "key  value" lines with aligned values. */
export function fields(pairs: readonly (readonly [string, string])[], indent = ""): string {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${indent}${k.padEnd(w)}  ${v}`).join("\n") + "\n";
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Local time "YYYY-MM-DD HH:MM:SS" (honours TZ); "-" for 0. */
export function formatTime(ms: number | bigint): string {
  const n = Number(ms);
  if (!Number.isFinite(n) || n <= 0) return "-";
  const d = new Date(n);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Local clock time "HH:MM:SS". */
export function formatClock(ms: number | bigint): string {
  const d = new Date(Number(ms));
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "1h", "15m", "90s", "1h 30m" (lib/base/duration.ts). */
export { formatDuration };

export function shortMode(mode: string): string {
  if (mode === HANDOFF_MODE) return "handoff";
  if (mode === TASK_MODE) return "task";
  return mode;
}

/** Full mode id for "handoff" / "task" (anything else passes through). */
export function modeId(name: string): string {
  if (name === "handoff") return HANDOFF_MODE;
  if (name === "task") return TASK_MODE;
  return name;
}

export function stateName(state: SessionState): string {
  return SessionState[state]?.replace(/^SESSION_STATE_/, "") ?? String(state);
}

export function eventName(type: EventType): string {
  return EventType[type]?.replace(/^EVENT_TYPE_/, "") ?? String(type);
}

export function percent(fraction: number | undefined): string {
  return fraction === undefined ? "-" : `${Math.round(fraction * 100)}%`;
}

function quote(s: string, max = 60): string {
  const one = s.replace(/\s+/g, " ").trim();
  return `"${one.length > max ? `${one.slice(0, max - 1)}…` : one}"`;
}

type Json = ReturnType<typeof decodePayloadToJson>;
const str = (p: Json, k: string): string => {
  const v = p?.[k];
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
};
const num = (p: Json, k: string): number => Number(p?.[k] ?? 0);

/** One-line description of an envelope for tables and narration. */
export function summarizeEnvelope(env: Envelope): string {
  const p = decodePayloadToJson(env.mode, env.messageType, env.payload);
  if (!p) return `${env.payload.length} bytes (not decodable)`;
  switch (env.messageType) {
    case "SessionStart": {
      const parts = (p.participants as string[] | undefined) ?? [];
      const policy = str(p, "policy_version");
      return `${quote(str(p, "intent"), 40)}; ${parts.length} participants; ttl ${formatDuration(num(p, "ttl_ms"))}${policy && policy !== "policy.default" ? `; policy ${policy}` : ""}`;
    }
    case "HandoffOffer":
      return `${str(p, "handoff_id")} → ${str(p, "target_participant")}${str(p, "scope") ? `, scope ${quote(str(p, "scope"), 40)}` : ""}`;
    case "HandoffContext": {
      const ct = str(p, "content_type");
      const ctx = Buffer.from(str(p, "context"), "base64");
      const bytes = ctx.byteLength;
      let preview = "";
      if (isTextual(ct)) {
        const raw = ctx.toString("utf8");
        const first = raw.split("\n").find((l) => l.trim() !== "");
        if (first) preview = ` ${quote(first, 40)}`;
      }
      return `${str(p, "handoff_id")}: ${ct || "untyped"}, ${formatBytes(bytes)}${preview}`;
    }
    case "HandoffAccept":
    case "HandoffDecline": {
      const reason = str(p, "reason");
      return `${str(p, "handoff_id")}${reason ? `: ${quote(reason)}` : ""}`;
    }
    case "TaskRequest": {
      const to = str(p, "requested_assignee");
      return `${str(p, "task_id")} ${quote(str(p, "title"), 40)} → ${to || "any participant"}`;
    }
    case "TaskAccept":
    case "TaskReject": {
      const reason = str(p, "reason");
      return `${str(p, "task_id")}${reason ? `: ${quote(reason)}` : ""}`;
    }
    case "TaskUpdate": {
      const msg = str(p, "message");
      return `${str(p, "task_id")} ${percent(num(p, "progress"))}${msg ? ` ${quote(msg)}` : ""}`;
    }
    case "TaskComplete": {
      const summary = str(p, "summary");
      return `${str(p, "task_id")}${summary ? ` ${quote(summary)}` : ""}`;
    }
    case "TaskFail": {
      const code = str(p, "error_code");
      return `${str(p, "task_id")}${code ? ` ${code}` : ""}${p.retryable === true ? " (retryable)" : ""}${str(p, "reason") ? ` ${quote(str(p, "reason"))}` : ""}`;
    }
    case "Commitment":
      return `${str(p, "action")} (${p.outcome_positive === true ? "positive" : "negative"})${str(p, "reason") ? `: ${quote(str(p, "reason"))}` : ""}`;
    default:
      return "";
  }
}

/** SessionMetadata as plain JSON (snake_case, numbers, short state name). */
export function metadataJson(m: SessionMetadata): Record<string, unknown> {
  return {
    session_id: m.sessionId,
    mode: m.mode,
    state: stateName(m.state),
    initiator: m.initiator,
    participants: [...m.participants],
    started_at_unix_ms: Number(m.startedAtUnixMs),
    expires_at_unix_ms: Number(m.expiresAtUnixMs),
    mode_version: m.modeVersion,
    configuration_version: m.configurationVersion,
    policy_version: m.policyVersion,
    context_id: m.contextId,
    extension_keys: [...m.extensionKeys],
    participant_activity: m.participantActivity.map((a) => ({
      participant_id: a.participantId,
      message_count: a.messageCount,
      last_message_at_unix_ms: Number(a.lastMessageAtUnixMs),
    })),
  };
}

export function lifecycleJson(ev: SessionLifecycleEvent): Record<string, unknown> {
  return {
    event_type: eventName(ev.eventType),
    observed_at_unix_ms: Number(ev.observedAtUnixMs),
    session: ev.session ? metadataJson(ev.session) : null,
  };
}

export function policyJson(d: PolicyDescriptor): Record<string, unknown> {
  let rules: unknown = d.rules;
  try {
    rules = JSON.parse(d.rules === "" ? "{}" : d.rules);
  } catch {
    /* keep the raw text */
  }
  return { policy_id: d.policyId, mode: d.mode, description: d.description, schema_version: d.schemaVersion, rules };
}

/** Deep copy safe for JSON.stringify: bytes → base64, bigint → number (or string when unsafe). */
export function jsonSafe(value: unknown): unknown {
  if (value instanceof Uint8Array) return base64Encode(value);
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}

export function toJsonText(value: unknown): string {
  return `${JSON.stringify(jsonSafe(value), null, 2)}\n`;
}

/** Wrap a paragraph to `width` columns with an indent. */
export function wrap(text: string, width = 88, indent = ""): string {
  const words = text.replace(/\s+/g, " ").trim().split(" ");
  const lines: string[] = [];
  let cur = "";
  for (const w of words) {
    if (cur !== "" && indent.length + cur.length + 1 + w.length > width) {
      lines.push(indent + cur);
      cur = w;
    } else cur = cur === "" ? w : `${cur} ${w}`;
  }
  if (cur !== "") lines.push(indent + cur);
  return lines.join("\n");
}
