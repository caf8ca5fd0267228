// Requests a page sends before the code that reads their answers has come.
//
// The session page's live stream request leaves before React hydrates the
// page instead of after its Connect and protobuf code has been fetched and
// run, so its answer is already there when that code asks for it. The request itself is built by the server with
// Connect's and protobuf-es's own functions (features/session/early-stream.ts),
// as the browser's Connect client would build it: this module only sends it,
// and hands its response to the first fetch that asks for the same URL and
// body (the Connect transport's fetch, lib/client/transport.ts). Nothing here
// reads or decodes the answer.
//
// The page carries its request twice: as JSON in an attribute of an empty,
// hidden element of its HTML (EARLY_REQUEST_ELEMENT, read by
// instrumentation-client.ts, which Next.js runs before React hydrates
// anything), and as a prop of LiveSession, which sends it when it first
// renders (a page reached by client-side navigation has no new HTML; the same
// request found waiting is not sent twice).
//
// A request nobody claims is aborted after UNCLAIMED_MS, when the page that
// sent it goes away (dropEarlyFetches), or when more than MAX_PENDING wait.

import { base64Decode } from "@bufbuild/protobuf/wire";

/** A request as the server built it: an absolute path, its headers, and its body in base64. */
export interface EarlyRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

interface Pending {
  url: string;
  body: Uint8Array<ArrayBuffer>;
  controller: AbortController;
  response: Promise<Response>;
  timer: ReturnType<typeof setTimeout>;
}

/** An early request nobody claimed within this time is aborted. */
export const UNCLAIMED_MS = 15_000;
/** At most this many early requests wait; starting another aborts the oldest. */
export const MAX_PENDING = 4;

const pending: Pending[] = [];

/** The id of the page's element holding its early request, as JSON in its EARLY_REQUEST_ATTRIBUTE. */
export const EARLY_REQUEST_ELEMENT = "baton-early-request";
export const EARLY_REQUEST_ATTRIBUTE = "data-request";

/** The request in a page's element, or undefined when there is none or it is not one. */
export function parseEarlyRequest(text: string | null | undefined): EarlyRequest | undefined {
  if (!text) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const { url, headers, body } = v as Record<string, unknown>;
  if (typeof url !== "string" || !url.startsWith("/") || url.startsWith("//")) return undefined;
  if (typeof body !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return undefined;
  if (typeof headers !== "object" || headers === null) return undefined;
  const h: Record<string, string> = {};
  for (const [k, x] of Object.entries(headers)) {
    if (typeof x !== "string") return undefined;
    h[k] = x;
  }
  return { url, headers: h, body };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function remove(p: Pending): void {
  const i = pending.indexOf(p);
  if (i >= 0) pending.splice(i, 1);
  clearTimeout(p.timer);
}

/** Gives a waiting request up: no longer waiting, and aborted. */
function abandon(p: Pending): void {
  remove(p);
  p.controller.abort();
}

/**
 * Sends `req` now, relative to `origin`, unless the same request already waits.
 * Uses the same fetch options as the Connect transport: same-origin
 * credentials, redirects refused.
 */
export function startEarlyFetch(req: EarlyRequest, origin: string, fetchFn: typeof fetch = globalThis.fetch): void {
  const target = new URL(req.url, origin);
  // Only ever to the page's own origin.
  if (target.origin !== new URL(origin).origin) return;
  const url = target.href;
  // A copy with its own ArrayBuffer: what fetch's body type asks for.
  const body = new Uint8Array(base64Decode(req.body));
  if (pending.some((p) => p.url === url && sameBytes(p.body, body))) return;
  while (pending.length >= MAX_PENDING) abandon(pending[0]!);
  const controller = new AbortController();
  const response = fetchFn(url, {
    method: "POST",
    headers: req.headers,
    body,
    signal: controller.signal,
    credentials: "same-origin",
    redirect: "error",
  });
  // Nobody may ever claim it: its failure is reported to whoever does, never as an unhandled rejection.
  response.catch(() => undefined);
  const p: Pending = {
    url,
    body,
    controller,
    response,
    timer: setTimeout(() => abandon(p), UNCLAIMED_MS),
  };
  pending.push(p);
}

/**
 * The response of the early request with this URL and body, if one waits:
 * it is now the caller's, and aborting `init.signal` aborts it. Undefined
 * otherwise (the caller sends its own request).
 */
export function claimEarlyFetch(url: string, init: RequestInit | undefined): Promise<Response> | undefined {
  if (pending.length === 0 || init?.method !== "POST" || !(init.body instanceof Uint8Array)) return undefined;
  const body = init.body;
  const p = pending.find((x) => x.url === url && sameBytes(x.body, body));
  if (!p) return undefined;
  remove(p);
  const signal = init.signal;
  if (signal) {
    if (signal.aborted) p.controller.abort(signal.reason);
    else signal.addEventListener("abort", () => p.controller.abort(signal.reason), { once: true });
  }
  return p.response;
}

/** Sends the request the document carries, if it has one. */
export function startEarlyFetchOfPage(doc: Document, origin: string): void {
  const req = parseEarlyRequest(doc.getElementById(EARLY_REQUEST_ELEMENT)?.getAttribute(EARLY_REQUEST_ATTRIBUTE));
  if (req) startEarlyFetch(req, origin);
}

/** Aborts every early request nobody has claimed (the page that sent them was left). */
export function dropEarlyFetches(): void {
  for (const p of [...pending]) abandon(p);
}

/** How many early requests wait (for tests). */
export function pendingEarlyFetches(): number {
  return pending.length;
}
