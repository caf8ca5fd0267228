import { expect, it } from "vitest";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import { auditNdjson, auditTranscript } from "@/features/session/audit";

const events = [
  makeEvent(
    HANDOFF_MODE,
    "SessionStart",
    { intent: "pager", participants: ["human:alice", "agent://bob"], ttlMs: 60_000n },
    { sender: "human:alice", sequence: 1 },
  ),
  makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "h1", targetParticipant: "agent://bob" }, { sender: "human:alice", sequence: 2 }),
  makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: "h1", acceptedBy: "agent://bob" }, { sender: "agent://bob", sequence: 3 }),
];
const kindOf = (s: string) => (s.startsWith("human:") ? ("person" as const) : ("agent" as const));

it("exports keep who acted: actor_kind on every message", () => {
  const lines = auditNdjson(events, kindOf)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { sequence: number; sender: string; actor_kind: string; message_type: string });
  expect(lines.map((l) => [l.sequence, l.message_type, l.sender, l.actor_kind])).toEqual([
    [1, "SessionStart", "human:alice", "person"],
    [2, "HandoffOffer", "human:alice", "person"],
    [3, "HandoffAccept", "agent://bob", "agent"],
  ]);
  const t = auditTranscript(events, kindOf, { mode: HANDOFF_MODE, sessionId: "s1" });
  expect(t).toMatchObject({ mode: HANDOFF_MODE, session_id: "s1" });
  expect(t.messages.map((m) => m.actor_kind)).toEqual(["person", "person", "agent"]);
});

it("exports text content decoded, binary content as bytes", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const more = [
    makeEvent(
      HANDOFF_MODE,
      "HandoffContext",
      { handoffId: "h1", contentType: "text/markdown; charset=utf-8", context: enc("# Runbook\n- check é") },
      { sender: "human:alice", sequence: 4 },
    ),
    makeEvent(
      HANDOFF_MODE,
      "HandoffContext",
      { handoffId: "h1", contentType: "application/octet-stream", context: enc("looks like text") },
      { sender: "human:alice", sequence: 5 },
    ),
    makeEvent(
      HANDOFF_MODE,
      "HandoffContext",
      { handoffId: "h1", contentType: "text/plain", context: new Uint8Array([0xff, 0xfe]) },
      { sender: "human:alice", sequence: 6 },
    ),
  ];
  const lines = auditNdjson(more, kindOf)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { payload: Record<string, unknown> });
  expect(lines[0]?.payload).toMatchObject({ context_text: "# Runbook\n- check é", content_type: "text/markdown; charset=utf-8" });
  expect(lines[0]?.payload.context).toBeUndefined();
  // A binary type keeps its bytes, even when they happen to be text; invalid UTF-8 too.
  expect(lines[1]?.payload.context).toBe(btoa("looks like text"));
  expect(lines[2]?.payload.context).toBe(btoa(String.fromCharCode(0xff, 0xfe)));
  const t = auditTranscript(more, kindOf);
  expect((t.messages[0]?.payload as Record<string, unknown>).context_text).toBe("# Runbook\n- check é");
});
