import { expect, it } from "vitest";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import { auditNdjson, auditTranscript } from "./audit";

const events = [
  makeEvent(HANDOFF_MODE, "SessionStart", { intent: "pager", participants: ["human:alice", "agent://bob"], ttlMs: 60_000n }, { sender: "human:alice", sequence: 1 }),
  makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "h1", targetParticipant: "agent://bob" }, { sender: "human:alice", sequence: 2 }),
  makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: "h1", acceptedBy: "agent://bob" }, { sender: "agent://bob", sequence: 3 }),
];
const kindOf = (s: string) => (s.startsWith("human:") ? ("person" as const) : ("agent" as const));

it("exports keep who acted: actor_kind on every message", () => {
  const lines = auditNdjson(events, kindOf).trim().split("\n").map((l) => JSON.parse(l) as { sequence: number; sender: string; actor_kind: string; message_type: string });
  expect(lines.map((l) => [l.sequence, l.message_type, l.sender, l.actor_kind])).toEqual([
    [1, "SessionStart", "human:alice", "person"],
    [2, "HandoffOffer", "human:alice", "person"],
    [3, "HandoffAccept", "agent://bob", "agent"],
  ]);
  const t = auditTranscript(events, kindOf, { mode: HANDOFF_MODE, sessionId: "s1" });
  expect(t).toMatchObject({ mode: HANDOFF_MODE, session_id: "s1" });
  expect(t.messages.map((m) => m.actor_kind)).toEqual(["person", "person", "agent"]);
});
