// A Connect server-streaming call sent before the code that reads it has
// arrived. The session page's stream is asked for in the page's `load`
// event by the shell (features/session/early-session-stream.ts), a few
// hundred milliseconds before the live view's code (Connect, protobuf-es) is
// in and evaluated; the transport's fetch (lib/client/transport.ts) then
// takes the response that is already there instead of sending the same
// request again. A call is taken only by a request for the same URL with the
// same body bytes, once; a request for that URL with other bytes (the view
// resumed elsewhere) cancels it, and one nobody takes is cancelled after
// UNCLAIMED_MS. Nothing here knows protobuf: the caller brings the bytes.

/** A call nobody took within this time is cancelled (the page was left, or the view never came). */
export const UNCLAIMED_MS = 15_000;

interface EarlyCall {
  body: Uint8Array;
  response: Promise<Response>;
  controller: AbortController;
  timer: ReturnType<typeof setTimeout>;
}

const calls = new Map<string, EarlyCall>();

/** The Connect protocol's envelope around one message: flags 0, then its length (4 bytes, big-endian). */
export function connectEnvelope(message: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function cancel(url: string): void {
  const c = calls.get(url);
  if (!c) return;
  calls.delete(url);
  clearTimeout(c.timer);
  c.controller.abort();
}

/**
 * Sends a server-streaming call (binary Connect protocol) to `url` now,
 * with `envelope` (connectEnvelope of the request message) as its body.
 * A call already waiting for the same URL is replaced.
 */
export function sendEarly(url: string, envelope: Uint8Array<ArrayBuffer>, fetchImpl: typeof fetch = globalThis.fetch): void {
  cancel(url);
  const controller = new AbortController();
  const response = fetchImpl(url, {
    method: "POST",
    headers: { "content-type": "application/connect+proto", "connect-protocol-version": "1" },
    body: envelope,
    credentials: "same-origin",
    redirect: "error",
    signal: controller.signal,
  });
  // Not a failure of anyone's until someone takes it.
  response.catch(() => undefined);
  const timer = setTimeout(() => cancel(url), UNCLAIMED_MS);
  calls.set(url, { body: envelope, response, controller, timer });
}

/**
 * The response of the call sent early to `url` with this body, for the
 * caller to read as its own (cancelled with `signal` from now on); undefined
 * when there is none, and then an early call to `url` with another body is
 * cancelled.
 */
export function takeEarly(url: string, body: unknown, signal: AbortSignal | null | undefined): Promise<Response> | undefined {
  const c = calls.get(url);
  if (!c) return undefined;
  if (!(body instanceof Uint8Array) || !sameBytes(body, c.body) || signal?.aborted) {
    cancel(url);
    return undefined;
  }
  calls.delete(url);
  clearTimeout(c.timer);
  signal?.addEventListener("abort", () => c.controller.abort(), { once: true });
  return c.response;
}

/** Whether a call to `url` is waiting to be taken. */
export function hasEarly(url: string): boolean {
  return calls.has(url);
}
