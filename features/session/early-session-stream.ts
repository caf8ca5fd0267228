// The session page's stream, asked for in the page's `load` event by the
// shell (features/shell/page-code.ts), before the live view's code is in:
// the first view says where its handed-over state ends (data-resume-after),
// and the request the live view will make (SubscribeSession after that
// sequence) is sent now; the transport hands its response to the live view's
// stream when that asks for the same bytes (lib/client/early-call.ts). The
// server's answer (the metadata and caught_up) is then already in when the
// code that reads it has been evaluated.
//
// The request message is encoded here by hand, without protobuf-es: the
// point is to send it before protobuf-es and the generated descriptors have
// arrived (about 90 ms of evaluating on the 2-core machine). It has two
// fields; early-session-stream.test.ts checks the bytes against protobuf-es.

import { connectEnvelope, sendEarly } from "@/lib/client/early-call";

/** The Connect path of baton.v1.ConsoleService.SubscribeSession (checked against the generated service in the test). */
export const SUBSCRIBE_SESSION_PATH = "/baton.v1.ConsoleService/SubscribeSession";

/** The attribute of the first view that holds the last sequence of its handed-over state. */
export const RESUME_AFTER_ATTRIBUTE = "data-resume-after";

function varint(out: number[], value: bigint): void {
  let v = value;
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

/** SubscribeSessionRequest { session_id = 1; after_sequence = 2 } in the protobuf binary format (proto3: zero values omitted). */
export function subscribeSessionMessage(sessionId: string, afterSequence: bigint): Uint8Array {
  if (afterSequence < 0n || afterSequence >= 1n << 64n) throw new RangeError(`after_sequence ${afterSequence} is not a uint64`);
  const out: number[] = [];
  if (sessionId !== "") {
    const id = new TextEncoder().encode(sessionId);
    out.push(0x0a);
    varint(out, BigInt(id.length));
    for (const b of id) out.push(b);
  }
  if (afterSequence !== 0n) {
    out.push(0x10);
    varint(out, afterSequence);
  }
  return new Uint8Array(out);
}

/**
 * Sends the session page's stream request now, when its first view has
 * handed over a state (the attribute above, a decimal sequence); returns
 * whether it did. `origin` is the page's (the transport's base URL).
 */
export function sendSessionStreamEarly(doc: Pick<Document, "querySelector">, origin: string, sessionId: string): boolean {
  const raw = doc.querySelector(`[${RESUME_AFTER_ATTRIBUTE}]`)?.getAttribute(RESUME_AFTER_ATTRIBUTE);
  if (!raw || !/^\d{1,20}$/.test(raw)) return false;
  const after = BigInt(raw);
  if (after >= 1n << 64n) return false;
  sendEarly(`${origin}${SUBSCRIBE_SESSION_PATH}`, connectEnvelope(subscribeSessionMessage(sessionId, after)));
  return true;
}
