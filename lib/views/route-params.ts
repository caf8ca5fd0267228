// Validation of values that arrive in URLs: session ids and event deep links.

import { isValidSessionId } from "@/lib/macp/ids";

/** Session ids are UUIDs (v4/v7, lowercase) or ≥ 22 base64url characters (PROTOCOL §2.6), bounded here. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function parseSessionIdParam(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  // Only ids a runtime can hold (§2.6): anything else gets the page's "not a session id", never a runtime error.
  return SESSION_ID.test(id) && isValidSessionId(id) ? id : undefined;
}

/** `?event=12` → 12; anything but a positive safe integer → undefined. */
export function parseEventParam(raw: string | null | undefined): number | undefined {
  if (!raw || !/^\d{1,15}$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** `#e-12` → 12. */
export function parseEventHash(hash: string | null | undefined): number | undefined {
  const m = /^#?e-(\d{1,15})$/.exec(hash ?? "");
  return m ? parseEventParam(m[1]) : undefined;
}

export function eventAnchorId(sequence: number): string {
  return `e-${sequence}`;
}

export function sessionHref(sessionId: string, sequence?: number): string {
  const base = `/sessions/${encodeURIComponent(sessionId)}`;
  return sequence === undefined ? base : `${base}?event=${sequence}`;
}
