// Every handoff and task vector of the spec's conformance suite, run against
// the real runtime over gRPC. Vectors are read from ../shared at test time.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConformanceSession, type ConformanceVector } from "@/lib/macp/conformance";
import { CORE_TYPES, DEFAULT_POLICY_ID } from "@/lib/macp/constants";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import { viewFromEvents } from "@/lib/macp/projections/session";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { RunningRuntime } from "@/lib/runtime";
import { clientFor, collectEnvelopes, startTestRuntime } from "./harness";

const dir = path.resolve(process.cwd(), "../shared/macp/conformance");
if (!fs.existsSync(dir)) throw new Error(`conformance vectors not found at ${dir}: the repo must sit next to shared/`);
const files = fs
  .readdirSync(dir)
  .filter((f) => /^(handoff|task)_.*\.json$/.test(f))
  .sort();

const STATE: Record<ConformanceVector["expected_final_state"], SessionState> = {
  Open: SessionState.OPEN,
  Resolved: SessionState.RESOLVED,
  Suspended: SessionState.SUSPENDED,
  Cancelled: SessionState.CANCELLED,
};

// The agent-facing port can be hosted by @grpc/grpc-js (default) or
// connect-node (MACP_GRPC_SERVER=connect); both must pass every vector.
describe.each(["grpc-js", "connect"])("conformance vectors (handoff, task) over gRPC, %s server", (server) => {
  let rt: RunningRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({ MACP_GRPC_SERVER: server });
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("found the vectors", () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  for (const file of files) {
    it(file, async () => {
      const vector = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")) as ConformanceVector;
      if (vector.policy) {
        const admin = clientFor(rt, vector.initiator);
        const p = vector.policy as Record<string, unknown>;
        const res = await admin.registerPolicy({
          policyDescriptor: {
            policyId: String(p.policy_id),
            mode: String(p.mode),
            description: String(p.description ?? ""),
            rules: typeof p.rules === "string" ? p.rules : JSON.stringify(p.rules ?? {}),
            schemaVersion: Number(p.schema_version ?? 1),
          },
        });
        expect(res.ok, res.error).toBe(true);
      }
      const session = buildConformanceSession(vector);
      const initiator = clientFor(rt, vector.initiator);
      const startAck = (await initiator.send({ envelope: session.start })).ack;
      expect(startAck?.ok, startAck?.error?.message).toBe(true);

      for (const step of session.steps) {
        const ack = (await clientFor(rt, step.message.sender).send({ envelope: step.envelope })).ack;
        const label = `${step.envelope.messageId} ${step.message.message_type} from ${step.message.sender}`;
        if (step.message.expect === "accept") {
          expect(ack?.ok, `${label}: ${ack?.error?.code} ${ack?.error?.message}`).toBe(true);
          expect(ack?.duplicate).toBe(false);
        } else {
          expect(ack?.ok, `${label} should be rejected`).toBe(false);
          if (step.message.expected_error_code) expect(ack?.error?.code, label).toBe(step.message.expected_error_code);
        }
      }

      const meta = (await initiator.getSession({ sessionId: session.start.sessionId })).metadata;
      expect(meta?.state).toBe(STATE[vector.expected_final_state]);
      expect(meta?.policyVersion).toBe(vector.policy_version === "" ? DEFAULT_POLICY_ID : vector.policy_version);

      // History as a subscriber sees it: exactly the accepted messages, in order.
      const history = await collectEnvelopes(initiator, session.start.sessionId, session.accepted.length);
      expect(history.map((e) => e.messageId)).toEqual(session.accepted.map((e) => e.envelope.messageId));

      const view = viewFromEvents(history.map((envelope, i) => ({ envelope, sequence: i + 1 })));
      if (vector.expected_final_state === "Resolved") expect(view.phase).toBe("Committed");
      const offers = (vector.expected_mode_state as { offers?: Record<string, { disposition: string }> } | undefined)?.offers;
      for (const [id, want] of Object.entries(offers ?? {})) {
        const rec = view.handoff?.offers.find((o) => o.handoffId === id);
        expect(rec, `offer ${id}`).toBeDefined();
        const disposition = rec?.status === "accepted" ? "Accepted" : rec?.status === "declined" ? "Declined" : "Offered";
        expect(disposition).toBe(want.disposition);
      }
      const commitment = history.find((e) => e.messageType === CORE_TYPES.Commitment);
      if (vector.expect_resolution_present === false) expect(commitment).toBeUndefined();
      if (vector.expected_resolution) {
        expect(commitment).toBeDefined();
        const json = decodePayloadToJson(vector.mode, CORE_TYPES.Commitment, commitment!.payload) ?? {};
        for (const [k, v] of Object.entries(vector.expected_resolution)) expect(json[k], k).toEqual(v);
      }
    });
  }
});
