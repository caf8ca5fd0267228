import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ParticipantActivitySchema, SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { viewFromEvents } from "@/lib/macp/projections/session";
import { makeEvent } from "@/lib/macp/test-utils";
import { lastActivityMs } from "./activity";
import { toSummary } from "./summary";

// Issue 12, item 9: "Last activity" is the newest event's time, the same in the list and on the page.
describe("lastActivityMs", () => {
  const T = 1_700_000_000_000;
  const start = makeEvent(
    HANDOFF_MODE,
    "SessionStart",
    { intent: "pager", participants: ["agent://a", "agent://b"], ttlMs: 60_000n },
    { sender: "agent://a", ts: T },
  );
  const offer = makeEvent(
    HANDOFF_MODE,
    "HandoffOffer",
    { handoffId: "h1", targetParticipant: "agent://b" },
    { sender: "agent://a", ts: T + 60_000 },
  );
  const meta = (lastMessageAt: number) =>
    create(SessionMetadataSchema, {
      sessionId: "s1",
      state: SessionState.EXPIRED,
      startedAtUnixMs: BigInt(T),
      participantActivity: [
        create(ParticipantActivitySchema, { participantId: "agent://a", messageCount: 2, lastMessageAtUnixMs: BigInt(lastMessageAt) }),
      ],
    });

  it("is what the list row says, for the page too: the newest event, or the runtime's receipt of it when later", () => {
    const view = viewFromEvents([start, offer]);
    // An agent whose clock is behind: the runtime received the offer 5 minutes after the agent's timestamp.
    for (const received of [T + 60_000, T + 360_000, T + 30_000]) {
      const m = meta(received);
      const row = Number(toSummary(m, view, 2, T + 3_600_000).lastActivityUnixMs);
      expect(lastActivityMs(m, view.lastActivityMs)).toBe(row);
    }
    // Never "now" for a session that has been quiet (a replay sets the receive time, not the activity).
    expect(lastActivityMs(meta(T + 60_000), view.lastActivityMs)).toBe(T + 60_000);
    // Without metadata: the events' own time.
    expect(lastActivityMs(undefined, view.lastActivityMs)).toBe(T + 60_000);
  });

  it("does not let an agent's clock claim a time later than now, on the list or the page", () => {
    const ahead = makeEvent(
      HANDOFF_MODE,
      "HandoffOffer",
      { handoffId: "h1", targetParticipant: "agent://b" },
      { sender: "agent://a", ts: T + 86_400_000 },
    );
    const view = viewFromEvents([start, ahead]);
    const m = meta(T + 60_000);
    expect(lastActivityMs(m, view.lastActivityMs, T + 120_000)).toBe(T + 120_000);
    expect(Number(toSummary(m, view, 2, T + 120_000).lastActivityUnixMs)).toBe(T + 120_000);
  });
});
