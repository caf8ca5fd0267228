import { afterEach, describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import { ConsoleService, SessionEventSchema, SessionSummarySchema, SubscribeSessionResponseSchema, type SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema } from "@/lib/gen/macp/v1/envelope_pb";
import { flatJoinSupported, installFlatJoin, uninstallFlatJoin } from "./proto-join";

function bigEvent(bytes: number): SubscribeSessionResponse {
  const payload = new Uint8Array(bytes);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 31 + 7) & 0xff;
  return create(SubscribeSessionResponseSchema, {
    item: {
      case: "event",
      value: create(SessionEventSchema, {
        sessionId: "s-1",
        sequence: 42n,
        observedAtUnixMs: 1_700_000_000_000n,
        envelope: create(EnvelopeSchema, {
          macpVersion: "1.0",
          mode: "macp.mode.handoff.v1",
          messageType: "ContextShared",
          messageId: "m-1",
          sessionId: "s-1",
          sender: "agent://a",
          timestampUnixMs: 1_700_000_000_000n,
          payload,
        }),
      }),
    },
  });
}

const summary = create(SessionSummarySchema, {
  metadata: create(SessionMetadataSchema, { sessionId: "s-2", mode: "macp.mode.task.v1", participants: ["agent://a", "agent://b", "person://c"], initiator: "agent://a" }),
  intent: "on-call hand-over (ünïcode)",
  eventCount: 7n,
});

/** Calls of BinaryWriter.prototype.finish while `fn` runs: one per copy of the whole message or a nested one. */
function finishes(fn: () => void): number {
  const original = BinaryWriter.prototype.finish;
  let n = 0;
  BinaryWriter.prototype.finish = function (this: BinaryWriter) {
    n++;
    return original.call(this);
  };
  try {
    fn();
  } finally {
    BinaryWriter.prototype.finish = original;
  }
  return n;
}

describe("installFlatJoin", () => {
  afterEach(() => uninstallFlatJoin());

  it("writes the same bytes as the library's join", () => {
    expect(flatJoinSupported()).toBe(true);
    const event = bigEvent(300_000);
    const before = [toBinary(SubscribeSessionResponseSchema, event), toBinary(SessionSummarySchema, summary)];
    expect(installFlatJoin()).toBe(true);
    const after = [toBinary(SubscribeSessionResponseSchema, event), toBinary(SessionSummarySchema, summary)];
    expect(Buffer.from(after[0]!).equals(Buffer.from(before[0]!))).toBe(true);
    expect(Buffer.from(after[1]!).equals(Buffer.from(before[1]!))).toBe(true);
    const back = fromBinary(SubscribeSessionResponseSchema, after[0]!);
    expect(back.item.case === "event" && back.item.value.envelope?.payload).toEqual(event.item.case === "event" && event.item.value.envelope?.payload);
  });

  it("moves a fork's chunks into its parent instead of copying them", () => {
    installFlatJoin();
    const big = new Uint8Array(1 << 20);
    const w = new BinaryWriter();
    w.tag(1, 2).fork().tag(8, 2).bytes(big).join();
    // The payload itself is still pending: nothing was copied yet.
    expect((w as unknown as { chunks: Uint8Array[] }).chunks).toContain(big);
    const out = w.finish();
    uninstallFlatJoin();
    const reference = new BinaryWriter().tag(1, 2).fork().tag(8, 2).bytes(big).join().finish();
    expect(Buffer.from(out).equals(Buffer.from(reference))).toBe(true);
  });

  it("is what Connect's serializer uses: one whole-message copy for an event three messages deep", () => {
    const serialize = (m: SubscribeSessionResponse) =>
      createMethodSerializationLookup(ConsoleService.method.subscribeSession, undefined, undefined, { readMaxBytes: 0xffffffff, writeMaxBytes: 0xffffffff })
        .getO(true)
        .serialize(m);
    const event = bigEvent(1_000_000);
    let library = new Uint8Array();
    expect(finishes(() => (library = serialize(event)))).toBe(3); // envelope, event, response
    installFlatJoin();
    let flat = new Uint8Array();
    expect(finishes(() => (flat = serialize(event)))).toBe(1);
    expect(Buffer.from(flat).equals(Buffer.from(library))).toBe(true);
  });
});
