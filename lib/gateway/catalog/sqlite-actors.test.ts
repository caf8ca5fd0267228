// The catalog's actors table (sqlite.ts): the people picker's agents.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { catalog, closeAfterEach, write } from "./sqlite-test-kit";

closeAfterEach();

describe("SqliteCatalog actors (the people picker's agents)", () => {
  it("counts each session's participants once, newest first, and forgets them with the rows", () => {
    const c = catalog();
    const meta = (id: string, started: number, participants: string[]) =>
      create(SessionSummarySchema, {
        metadata: create(SessionMetadataSchema, {
          sessionId: id,
          mode: HANDOFF_MODE,
          state: SessionState.OPEN,
          startedAtUnixMs: BigInt(started),
          participants,
          initiator: participants[0] ?? "",
        }),
      });
    c.write([write(meta("s-one-xxxxxxxxxxxxxxxxxxxx", 1_000, ["agent://a", "agent://b"]))]);
    c.write([write(meta("s-two-xxxxxxxxxxxxxxxxxxxx", 2_000, ["agent://b", "human:zoe"]))]);
    // Rewriting a known session (a later change) does not count it again.
    c.write([write(meta("s-one-xxxxxxxxxxxxxxxxxxxx", 1_000, ["agent://a", "agent://b"]))]);
    expect(c.actors(10)).toEqual([
      { participantId: "agent://b", sessions: 2, lastSeenMs: 2_000 },
      { participantId: "human:zoe", sessions: 1, lastSeenMs: 2_000 },
      { participantId: "agent://a", sessions: 1, lastSeenMs: 1_000 },
    ]);
    expect(c.actors(1)).toHaveLength(1);
    // A feed that starts over (another runtime store) starts the actors over too.
    c.applyFeed([], { storeId: "other", change: 0n }, true);
    expect(c.actors(10)).toEqual([]);
  });
});
