import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { create, equals, toBinary } from "@bufbuild/protobuf";
import { EnvelopeSchema } from "@/lib/gen/macp/v1/envelope_pb";
import { CommitmentPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { viewFromEvents } from "@/lib/macp/projections/session";
import {
  formatRfc3339,
  parseCanonicalMessage,
  parseCanonicalTranscript,
  parseNdjson,
  toCanonicalMessage,
  toCanonicalTranscript,
  toNdjson,
} from "@/lib/macp/transcript";

const DIR = path.resolve(process.cwd(), "../shared/macp/examples");
if (!existsSync(DIR)) throw new Error(`Example transcripts not found at ${DIR}`);
const examples = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => [f, readFileSync(path.join(DIR, f), "utf8")] as const);

type Json = Record<string, unknown>;

describe("example transcripts round-trip (§2.9)", () => {
  it("has both example files", () => {
    expect(examples.map(([f]) => f)).toEqual(expect.arrayContaining(["handoff-mode-session.json", "task-mode-session.json"]));
  });

  it.each(examples)("%s: parse → export → equal message fields", (_file, text) => {
    const original = JSON.parse(text) as Json;
    const parsed = parseCanonicalTranscript(text);
    expect(parsed.mode).toBe(original.mode);
    expect(parsed.sessionId).toBe(original.session_id);
    expect(parsed.protocolVersion).toBe(original.protocol_version);

    const exported = toCanonicalTranscript(parsed.events);
    expect(exported.protocol_version).toBe(original.protocol_version);
    expect(exported.mode).toBe(original.mode);
    expect(exported.session_id).toBe(original.session_id);

    const originals = original.messages as Json[];
    expect(exported.messages).toHaveLength(originals.length);
    exported.messages.forEach((out, i) => {
      const src = originals[i] as Json;
      const { payload: srcPayload, ...srcFields } = src;
      const { payload: outPayload, sequence, ...outFields } = out;
      expect(outFields).toEqual(srcFields);
      expect(sequence).toBe(i + 1);
      // Every field the example wrote comes back identical; the only
      // additions are fields the example left at their defaults.
      const outObj = outPayload as Json;
      expect(outObj).toMatchObject(srcPayload as Json);
      for (const [k, v] of Object.entries(outObj)) {
        if (!(k in (srcPayload as Json))) expect([[], "", 0, false, {}]).toContainEqual(v);
      }
    });

    // And the export parses back to identical envelopes.
    const again = parseCanonicalTranscript(exported);
    again.envelopes.forEach((env, i) => {
      const first = parsed.envelopes[i];
      expect(first).toBeDefined();
      expect(equals(EnvelopeSchema, env, first as typeof env)).toBe(true);
    });
  });

  it("the examples fold into committed sessions", () => {
    for (const [file, text] of examples) {
      const view = viewFromEvents(parseCanonicalTranscript(text).events);
      expect(view.phase, file).toBe("Committed");
      expect(view.ignoredEvents, file).toBe(0);
    }
    const handoff = examples.find(([f]) => f.startsWith("handoff"));
    if (handoff) {
      const view = viewFromEvents(parseCanonicalTranscript(handoff[1]).events);
      const offer = view.handoff?.offers[0];
      expect(offer?.target).toBe(view.currentOwner);
      expect(offer?.offeredAt).toBe(Date.parse("2026-03-14T09:20:05Z"));
      expect(new TextDecoder().decode(offer?.contexts[0]?.context)).toContain("ticket_id");
    }
  });
});

describe("canonical export details", () => {
  it("uses payload_b64 when the payload cannot be decoded, and keeps empty strings", () => {
    const env = create(EnvelopeSchema, {
      macpVersion: "1.0",
      mode: HANDOFF_MODE,
      messageType: "HandoffWave",
      messageId: "m9",
      sessionId: "",
      sender: "",
      timestampUnixMs: 1_700_000_000_123n,
      payload: new Uint8Array([1, 2, 3]),
    });
    const msg = toCanonicalMessage({ envelope: env, sequence: 9 });
    expect(msg).toEqual({
      macp_version: "1.0",
      mode: HANDOFF_MODE,
      message_type: "HandoffWave",
      message_id: "m9",
      session_id: "",
      sender: "",
      timestamp: "2023-11-14T22:13:20.123Z",
      payload_b64: "AQID",
      sequence: 9,
    });
    expect(parseCanonicalMessage(msg).envelope).toEqual(env);
  });

  it("renders outcome_positive: false and RFC 3339 timestamps", () => {
    const env = buildEnvelope({
      mode: TASK_MODE,
      messageType: "Commitment",
      sessionId: "01JCTASK9Y5P9V4H0A8E0F4T01",
      sender: "agent://planner",
      messageId: "m5",
      timestampMs: Date.parse("2026-03-14T09:12:20Z"),
      payload: create(CommitmentPayloadSchema, { action: "task.failed", outcomePositive: false }),
    });
    const msg = toCanonicalMessage(env, 5);
    expect(msg.timestamp).toBe("2026-03-14T09:12:20Z");
    expect(msg.payload?.outcome_positive).toBe(false);
    expect(msg.payload?.commitment_id).toBe("");
    expect(formatRfc3339(0)).toBe("1970-01-01T00:00:00Z");
  });

  it("exports and parses NDJSON, one message per line", () => {
    const [, text] = examples[0] ?? ["", "{}"];
    const { events } = parseCanonicalTranscript(text);
    const nd = toNdjson(events);
    const lines = nd.trimEnd().split("\n");
    expect(lines).toHaveLength(events.length);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ message_type: "SessionStart", sequence: 1 });
    const back = parseNdjson(nd);
    expect(back.map((e) => toBinary(EnvelopeSchema, e.envelope))).toEqual(events.map((e) => toBinary(EnvelopeSchema, e.envelope)));
    expect(back.map((e) => e.sequence)).toEqual(events.map((e) => e.sequence));
  });

  it("reports malformed input clearly", () => {
    expect(() => parseCanonicalTranscript("{}")).toThrow(/messages/);
    expect(() => parseCanonicalTranscript({ messages: [{ message_type: "X", timestamp: "yesterday" }] })).toThrow(/#1: invalid RFC 3339/);
    expect(() => parseNdjson('{"mode":1}\n')).toThrow(/line 1/);
  });
});
