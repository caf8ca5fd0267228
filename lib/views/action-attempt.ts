// One user action from the browser, as pure bookkeeping:
//  - the message_id: made once per attempt and sent again unchanged when the
//    same attempt is retried (network failure, console restarting, double
//    click), so the server answers a repeat as a duplicate instead of acting
//    twice; a new one only after a definitive answer or a changed form;
//  - the outcome of a call, from an ActionResult (the runtime's verdict) or a
//    Connect error (refused before sending), with the sentence people read.

import { Code, ConnectError } from "@connectrpc/connect";
import { FieldViolationSchema, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";

export type ActionOutcome =
  /** The runtime accepted it (`duplicate`: an earlier try of this attempt already had). */
  | { kind: "ok"; duplicate: boolean; result: ActionResult }
  /** The runtime refused the message: MACP code and a plain explanation. */
  | { kind: "rejected"; code: string; explanation: string; detail: string }
  /** The console refused before sending: role, CSRF, or the protocol would refuse. */
  | { kind: "denied"; reason: string; denyCode: string }
  /** A field is wrong. */
  | { kind: "invalid"; field: string; description: string }
  | { kind: "signed-out"; message: string }
  /** The account can't act here yet (no runtime token, one-time password), or the state changed. */
  | { kind: "precondition"; message: string }
  | { kind: "not-found"; message: string }
  /** Nothing definitive: retrying the same attempt is safe. */
  | { kind: "retryable"; message: string };

export function outcomeOfResult(r: ActionResult): ActionOutcome {
  if (r.ok) return { kind: "ok", duplicate: r.duplicate, result: r };
  return {
    kind: "rejected",
    code: r.code || "INTERNAL_ERROR",
    explanation: r.explanation || "The runtime refused the message.",
    detail: r.message,
  };
}

const NETWORK = /failed to fetch|networkerror|network error|load failed|err_/i;

export function outcomeOfError(e: unknown): ActionOutcome {
  const err = ConnectError.from(e);
  const message = err.rawMessage || err.message;
  if (NETWORK.test(message)) return { kind: "retryable", message: "No connection to the console server." };
  switch (err.code) {
    case Code.PermissionDenied:
      return { kind: "denied", reason: message, denyCode: err.metadata.get("x-baton-deny") ?? "" };
    case Code.InvalidArgument: {
      const v = err.findDetails(FieldViolationSchema)[0];
      return { kind: "invalid", field: v?.field ?? "", description: v ? v.description : message };
    }
    case Code.Unauthenticated:
      return { kind: "signed-out", message };
    case Code.FailedPrecondition:
      return { kind: "precondition", message };
    case Code.NotFound:
      return { kind: "not-found", message };
    case Code.ResourceExhausted:
      return { kind: "precondition", message };
    default:
      // Unavailable, deadline, cancelled, internal, unknown: the message may or
      // may not have arrived; the same message_id makes a retry safe.
      return { kind: "retryable", message: message || "The console server did not answer." };
  }
}

/** Whether the server gave a definitive answer (the attempt is over). */
export function isDefinitive(o: ActionOutcome): boolean {
  return o.kind !== "retryable";
}

/** A CSRF refusal: the token may be stale (signed in again elsewhere); refresh it and retry once. */
export function isCsrfRefusal(o: ActionOutcome): boolean {
  return o.kind === "denied" && o.denyCode === "csrf";
}

/** One sentence for the result area and the screen-reader announcement. */
export function outcomeSentence(o: ActionOutcome, done: string): string {
  switch (o.kind) {
    case "ok":
      return o.duplicate ? `${done} (it had already gone through; nothing was sent twice).` : `${done}.`;
    case "rejected":
      return `The runtime refused it: ${o.code}. ${o.explanation}`;
    case "denied":
      return `Not allowed: ${o.reason}`;
    case "invalid":
      return o.field ? `Check ${o.field}: ${o.description}` : `Check the form: ${o.description}`;
    case "signed-out":
      return "You are signed out. Sign in again, then retry.";
    case "precondition":
    case "not-found":
      return o.message;
    case "retryable":
      return `${o.message} Nothing was lost: try again, and it will not be sent twice.`;
  }
}

// ------------------------------------------------------------- attempts

export interface Attempt {
  messageId: string;
  /** What was submitted (see fingerprintOf). */
  fingerprint: string;
  /** A definitive answer arrived; the next submit is a new attempt. */
  settled: boolean;
}

/**
 * The attempt for a submit: the previous one again while it has no definitive
 * answer and the form is unchanged (a retry or a double click), else a new one.
 */
export function attemptFor(prev: Attempt | undefined, fingerprint: string, newId: () => string): Attempt {
  if (prev && !prev.settled && prev.fingerprint === fingerprint) return prev;
  return { messageId: newId(), fingerprint, settled: false };
}

export function settle(attempt: Attempt, outcome: ActionOutcome): Attempt {
  return isDefinitive(outcome) ? { ...attempt, settled: true } : attempt;
}

function fnv1a(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

/** A stable text for a request's fields (keys sorted; bytes by length and hash). */
export function fingerprintOf(value: unknown): string {
  if (value instanceof Uint8Array) return `bytes:${value.byteLength}:${fnv1a(value)}`;
  if (typeof value === "bigint") return `${value}n`;
  if (Array.isArray(value)) return `[${value.map(fingerprintOf).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([k, v]) => v !== undefined && k !== "messageId" && k !== "$typeName")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${fingerprintOf(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/** A UUID v4 for message ids (crypto.randomUUID where available). */
export function newMessageId(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
