// Folds every conformance vector's accepted messages through the projections
// and checks what the vector itself expects. Vectors are read at test time
// from ../shared/macp/conformance (never copied into the repo).

import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fromBinary, ScalarType, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { buildConformanceSession, type ConformanceVector } from "@/lib/macp/conformance";
import { isOutcomeConsistent } from "@/lib/macp/outcome";
import { payloadSchemaFor } from "@/lib/macp/payloads";
import { handoffFromEvents, offerDispositions } from "@/lib/macp/projections/handoff";
import { taskFromEvents } from "@/lib/macp/projections/task";
import { viewFromEvents } from "@/lib/macp/projections/session";
import type { CommitmentRecord } from "@/lib/macp/projections/types";

const DIR = path.resolve(process.cwd(), "../shared/macp/conformance");
if (!existsSync(DIR)) {
  throw new Error(`Conformance vectors not found at ${DIR}. Run vitest from the repo root with /work/shared/macp checked out next to it.`);
}

const vectors: [string, ConformanceVector][] = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => [f, JSON.parse(readFileSync(path.join(DIR, f), "utf8")) as ConformanceVector]);

const modeVectors = vectors.filter(([, v]) => v.mode === HANDOFF_MODE || v.mode === TASK_MODE);
/** Other modes whose payloads the registry can encode (multi_round uses JSON payloads). */
const displayVectors = vectors.filter(
  ([, v]) => !modeVectors.some(([, m]) => m === v) && v.messages.every((m) => payloadSchemaFor(v.mode, m.message_type)),
);

/** The commitment in the vector's snake_case vocabulary. */
function commitmentJson(c: CommitmentRecord): JsonObject {
  return {
    commitment_id: c.commitmentId,
    action: c.action,
    authority_scope: c.authorityScope,
    reason: c.reason,
    outcome_positive: c.outcomePositive,
    mode_version: c.modeVersion,
    policy_version: c.policyVersion,
    configuration_version: c.configurationVersion,
  };
}

function checkResolution(vector: ConformanceVector, commitment: CommitmentRecord | undefined): void {
  if (vector.expected_final_state === "Resolved") expect(commitment, "Resolved implies a commitment").toBeDefined();
  if (vector.expect_resolution_present === false) expect(commitment).toBeUndefined();
  if (vector.expect_resolution_present === true) expect(commitment).toBeDefined();
  if (vector.expected_resolution) {
    expect(commitment).toBeDefined();
    const actual = commitmentJson(commitment as CommitmentRecord);
    for (const [key, want] of Object.entries(vector.expected_resolution)) {
      expect(actual[key], `expected_resolution.${key}`).toEqual(want);
    }
  }
  if (commitment) expect(isOutcomeConsistent(commitment.action, commitment.outcomePositive)).toBe(true);
}

describe("conformance vectors: Handoff and Task", () => {
  it("finds handoff and task vectors", () => {
    expect(modeVectors.some(([, v]) => v.mode === HANDOFF_MODE)).toBe(true);
    expect(modeVectors.some(([, v]) => v.mode === TASK_MODE)).toBe(true);
  });

  it.each(modeVectors)("%s", (_file, vector) => {
    const session = buildConformanceSession(vector, { startTimeMs: 1_700_000_000_000 });
    const accepted = session.accepted;
    expect(accepted).toHaveLength(1 + vector.messages.filter((m) => m.expect === "accept").length);

    const view = viewFromEvents(accepted);
    expect(view.ignoredEvents).toBe(0);
    expect(view.initiator).toBe(vector.initiator);
    expect(view.participants).toEqual(vector.participants);

    // Phase implied by the final state.
    switch (vector.expected_final_state) {
      case "Resolved":
        expect(view.phase).toBe("Committed");
        expect(view.lifecycle).toBe("Resolved");
        break;
      case "Open":
        expect(view.phase).not.toBe("Committed");
        expect(view.lifecycle).toBe("Open");
        break;
      default:
        // Suspended/Cancelled come from runtime annotations that vectors do not replay.
        expect(view.phase).not.toBe("Committed");
    }

    // Mode state assertions, derived from the vector.
    const modeState = vector.expected_mode_state ?? {};
    for (const [key, want] of Object.entries(modeState)) {
      if (key === "phase") {
        expect(view.phase).toBe(want);
      } else if (key === "offers" && vector.mode === HANDOFF_MODE) {
        const dispositions = offerDispositions(handoffFromEvents(accepted));
        const offers = want as Record<string, JsonValue>;
        for (const [id, expected] of Object.entries(offers)) {
          expect(dispositions[id], `offer ${id}`).toMatchObject(expected as JsonObject);
        }
      } else {
        throw new Error(`expected_mode_state.${key} is not checked by this harness; extend it`);
      }
    }

    const modeCommitment = vector.mode === HANDOFF_MODE ? handoffFromEvents(accepted).commitment : taskFromEvents(accepted).commitment;
    expect(modeCommitment).toEqual(view.commitment);
    checkResolution(vector, view.commitment);
  });
});

describe("conformance vectors: other modes (display decoding only)", () => {
  it.each(displayVectors)("%s folds with Pending/Committed", (_file, vector) => {
    const { accepted } = buildConformanceSession(vector, { startTimeMs: 1_700_000_000_000 });
    const view = viewFromEvents(accepted);
    expect(view.ignoredEvents).toBe(0);
    expect(view.phase).toBe(vector.expected_final_state === "Resolved" ? "Committed" : "Pending");
    checkResolution(vector, view.commitment);
  });
});

describe("buildConformanceSession", () => {
  it("follows the harness conventions (§13)", () => {
    const entry = modeVectors.find(([, v]) => v.messages.some((m) => m.expect === "reject"));
    expect(entry).toBeDefined();
    const vector = (entry as [string, ConformanceVector])[1];
    const s = buildConformanceSession(vector, { sessionId: "550e8400-e29b-41d4-a716-446655440000" });
    expect(s.start.messageId).toBe("m0");
    expect(s.start.sender).toBe(vector.initiator);
    expect(s.steps.map((x) => x.envelope.messageId)).toEqual(vector.messages.map((_, i) => `m${i + 1}`));
    expect(s.accepted.map((e) => e.sequence)).toEqual(s.accepted.map((_, i) => i + 1));
  });

  it("encodes bytes written as strings as UTF-8 and [] as empty, in every vector", () => {
    let checked = 0;
    for (const [, vector] of vectors) {
      const schemaless = vector.messages.some((m) => !payloadSchemaFor(vector.mode, m.message_type));
      if (schemaless) continue;
      const { steps } = buildConformanceSession(vector);
      for (const { message, envelope } of steps) {
        const schema = payloadSchemaFor(vector.mode, message.message_type);
        if (!schema) continue;
        const decoded = fromBinary(schema, envelope.payload) as unknown as Record<string, unknown>;
        for (const field of schema.fields) {
          if (field.fieldKind !== "scalar" || field.scalar !== ScalarType.BYTES) continue;
          const written = message.payload[field.name];
          if (written === undefined) continue;
          const bytes = decoded[field.localName] as Uint8Array;
          if (typeof written === "string") expect(new TextDecoder().decode(bytes)).toBe(written);
          else expect(Array.from(bytes)).toEqual(written);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});
