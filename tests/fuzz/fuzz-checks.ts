// The runtime fuzzer's oracle: what a correct answer looks like. An Ack must
// be well-formed (ids echoed, ok xor error, codes from the MACP registry) and
// agree with the protocol model's verdict; a raw request gets the gRPC
// layer's own status only for broken framing and INVALID_ENVELOPE exactly
// when it does not decode. Also the one-line descriptions used in reports.
import { fromBinary } from "@bufbuild/protobuf";
import { ERROR_CODES } from "@/lib/macp/constants";
import { SendRequestSchema, SendResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { Framing, Wire } from "./fuzz-actions";
import { sessionLabel, type Run } from "./fuzz-envelopes";
import type { Verdict } from "./protocol-model";
import type { RawOutcome } from "./raw-wire";

export function logLine(run: Run, index: number, identity: string | null, wire: string, env: Envelope, outcome: string): string {
  const t = env.messageType.length > 30 ? `${env.messageType.slice(0, 30)}…` : env.messageType;
  return `${index}. ${identity ?? "(anonymous)"} ${wire}: ${t || '""'} in ${sessionLabel(run, env.sessionId)} id=${JSON.stringify(env.messageId.slice(0, 30))} sender=${JSON.stringify(env.sender)} payload=${env.payload.length}B → ${outcome.slice(0, 160)}`;
}

export function describeAck(ack: Ack): string {
  return ack.ok ? (ack.duplicate ? "duplicate" : "accepted") : `rejected ${ack.error?.code}: ${ack.error?.message}`;
}

export function describeEnvelope(env: Envelope): string {
  return JSON.stringify({
    macpVersion: env.macpVersion,
    mode: env.mode,
    messageType: env.messageType.length > 40 ? `${env.messageType.slice(0, 40)}…` : env.messageType,
    messageId: env.messageId.length > 40 ? `${env.messageId.slice(0, 40)}…(${env.messageId.length})` : env.messageId,
    sessionId: env.sessionId.length > 40 ? `${env.sessionId.slice(0, 40)}…(${env.sessionId.length})` : env.sessionId,
    sender: env.sender,
    timestampUnixMs: String(env.timestampUnixMs),
    payload: `${env.payload.length} bytes`,
  });
}

const CODES = new Set<string>(ERROR_CODES);

/** Well-formedness of an Ack for `env` (throws with what is wrong). */
export function checkAck(ack: Ack | undefined, env: Envelope): Verdict {
  if (!ack) throw new Error("SendResponse without an ack");
  if (ack.messageId !== env.messageId) throw new Error(`ack.message_id ${JSON.stringify(ack.messageId)} does not echo the envelope's`);
  if (ack.sessionId !== env.sessionId) throw new Error(`ack.session_id ${JSON.stringify(ack.sessionId)} does not echo the envelope's`);
  if (ack.acceptedAtUnixMs <= 0n) throw new Error("ack.accepted_at_unix_ms is not set");
  if (ack.ok) {
    if (ack.error) throw new Error(`an ok ack carries an error (${ack.error.code})`);
    return ack.duplicate ? "duplicate" : "accept";
  }
  if (ack.duplicate) throw new Error("a rejected ack is marked duplicate");
  const e = ack.error;
  if (!e) throw new Error("a rejected ack has no error");
  if (!CODES.has(e.code)) throw new Error(`error code ${JSON.stringify(e.code)} is not in the MACP registry`);
  if (e.message.trim() === "") throw new Error(`error ${e.code} has no message`);
  if (e.messageId !== env.messageId || e.sessionId !== env.sessionId) throw new Error(`error ${e.code} does not echo the ids`);
  return "reject";
}

/** What checkRaw needs besides the answer: the model's verdict, the receive limit, and where verdicts are counted. */
export interface RawCheck {
  expect: (env: Envelope) => Verdict;
  maxReceiveBytes: number;
  tally: (verdict: Verdict, ack: Ack | undefined, env: Envelope) => void;
}

/**
 * Checks a raw answer (the gRPC layer's status for broken framing, INVALID_ENVELOPE for
 * undecodable requests, else a well-formed Ack with the model's verdict); returns what the server
 * made of the request and its verdict in words.
 */
export async function checkRaw(
  wire: Wire,
  sent: Uint8Array,
  out: RawOutcome,
  { expect, maxReceiveBytes, tally }: RawCheck,
): Promise<{ env?: Envelope; text: string }> {
  const status = `status ${out.status} ${JSON.stringify(out.message)}`;
  if (wire.kind === "framing") {
    const want: Record<Framing, number> = {
      truncated: 12, // UNIMPLEMENTED: "Received no request message"
      "no-message": 12,
      "two-messages": 12,
      "oversize-declared": 8, // RESOURCE_EXHAUSTED
      "compressed-identity": 0, // the identity "compression" is no compression
    };
    if (out.status !== want[wire.framing]) throw new Error(`framing ${wire.framing}: expected status ${want[wire.framing]}, got ${status}`);
    if (out.status !== 0) return { text: `${wire.framing}: ${status}` };
  }
  // What the server should have made of the bytes: exactly what we make of them.
  let decoded: Envelope | undefined;
  let decodeError = "";
  try {
    decoded = fromBinary(SendRequestSchema, sent).envelope;
    if (!decoded) decodeError = "no envelope";
  } catch (e) {
    decodeError = (e as Error).message;
  }
  if (sent.length > maxReceiveBytes) {
    if (out.status !== 8)
      throw new Error(`a ${sent.length}-byte request is over the receive limit, expected RESOURCE_EXHAUSTED, got ${status}`);
    return { text: status };
  }
  if (decodeError) {
    if (out.status !== 3 || !out.message.startsWith("INVALID_ENVELOPE: ")) {
      throw new Error(`an undecodable request (${decodeError}) must get INVALID_ARGUMENT "INVALID_ENVELOPE: …", got ${status}`);
    }
    return { text: `undecodable: ${status}` };
  }
  if (out.status !== 0) throw new Error(`a decodable SendRequest got ${status} instead of an Ack`);
  if (out.messages.length !== 1) throw new Error(`${out.messages.length} response messages`);
  const env = decoded!;
  const ack = fromBinary(SendResponseSchema, out.messages[0]!).ack;
  const got = checkAck(ack, env);
  const want = expect(env);
  const changed = wire.kind === "mutated" ? ` (the mutated request decodes to ${describeEnvelope(env)})` : "";
  if (got !== want) throw new Error(`the runtime answered ${describeAck(ack!)}${changed}, the protocol model says ${want}`);
  tally(got, ack, env);
  return { env, text: describeAck(ack!) };
}
