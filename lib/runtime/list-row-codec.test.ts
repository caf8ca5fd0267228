import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { ParticipantActivitySchema, SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import type { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { encodeListSummary } from "./list-row-codec";

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = ["", "a", "agent://owner", "ünïcödé ✓", "😀 emoji", "x".repeat(200), "line\nbreak", "\u0000nul"];

function summary(rand: () => number): SessionSummary {
  const s = () => ALPHABET[Math.floor(rand() * ALPHABET.length)] as string;
  const big = () => (rand() < 0.2 ? 0n : BigInt(Math.floor(rand() * 2 ** (rand() < 0.5 ? 14 : 53))));
  const list = (f: () => string) => Array.from({ length: Math.floor(rand() * 4) }, f);
  const metadata =
    rand() < 0.1
      ? undefined
      : create(SessionMetadataSchema, {
          sessionId: s(),
          mode: s(),
          state: Math.floor(rand() * 6) as SessionState,
          startedAtUnixMs: big(),
          expiresAtUnixMs: big(),
          modeVersion: s(),
          configurationVersion: s(),
          policyVersion: s(),
          participants: list(s),
          participantActivity: Array.from({ length: Math.floor(rand() * 4) }, () =>
            create(ParticipantActivitySchema, {
              participantId: s(),
              lastMessageAtUnixMs: big(),
              messageCount: rand() < 0.3 ? 0 : Math.floor(rand() * 2 ** 32),
            }),
          ),
          initiator: s(),
          contextId: s(),
          extensionKeys: list(s),
        });
  return create(SessionSummarySchema, {
    metadata,
    phase: s(),
    intent: s(),
    currentOwner: s(),
    currentTarget: s(),
    scope: s(),
    lastActivityUnixMs: big(),
    eventCount: big(),
    outcome: s(),
    phaseSinceUnixMs: big(),
    phaseDetail: s(),
    waitingOn: rand() < 0.05 ? list(s) : [],
  });
}

describe("encodeListSummary", () => {
  it("writes exactly the bytes toBinary writes, over varied rows", () => {
    const rand = prng(7);
    for (let i = 0; i < 2_000; i++) {
      const s = summary(rand);
      const bytes = encodeListSummary(s);
      expect(Buffer.from(bytes).equals(Buffer.from(toBinary(SessionSummarySchema, s))), `row ${i}`).toBe(true);
    }
  });

  it("falls back to toBinary for values outside the fast path, and round-trips", () => {
    const s = create(SessionSummarySchema, {
      metadata: create(SessionMetadataSchema, { sessionId: "s", startedAtUnixMs: -5n, expiresAtUnixMs: 2n ** 62n }),
      lastActivityUnixMs: -1n,
      eventCount: 2n ** 63n,
    });
    const bytes = encodeListSummary(s);
    expect(Buffer.from(bytes).equals(Buffer.from(toBinary(SessionSummarySchema, s)))).toBe(true);
    expect(fromBinary(SessionSummarySchema, bytes)).toEqual(s);
    expect(encodeListSummary(create(SessionSummarySchema))).toEqual(new Uint8Array(0));
  });
});
