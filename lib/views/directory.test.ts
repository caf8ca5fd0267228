import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ListDirectoryResponseSchema } from "@/lib/gen/baton/v1/actions_pb";
import { actorKindOf, approverChoices, directoryFrom, directoryFromPeople, nameIn, participantChoices } from "@/lib/views/directory";

const dir = directoryFrom(
  create(ListDirectoryResponseSchema, {
    users: [
      { username: "alice", displayName: "Alice Ng", role: "operator", participantId: "human:alice" },
      { username: "carol", displayName: "Carol Lee", role: "approver", participantId: "human:carol" },
      { username: "victor", displayName: "Victor", role: "viewer", participantId: "human:victor" },
      { username: "old", displayName: "Old", role: "admin", participantId: "human:old", disabled: true },
      { username: "ops", displayName: "Ops bot owner", role: "operator", participantId: "ops-desk" },
      { username: "weird", displayName: "W", role: "owner", participantId: "human:weird" },
    ],
    agents: [
      { participantId: "agent://a", sessionCount: 1, lastSeenUnixMs: 1n },
      { participantId: "agent://b", sessionCount: 3, lastSeenUnixMs: 5n },
    ],
  }),
);

describe("directory", () => {
  it("names people and tells people from agents (icon + word in the timeline, actor_kind in exports)", () => {
    expect(nameIn(dir, "human:carol")).toBe("Carol Lee");
    expect(nameIn(dir, "agent://oncall/bob")).toBe("oncall/bob");
    expect(actorKindOf(dir, "human:carol")).toBe("person");
    expect(actorKindOf(dir, "ops-desk")).toBe("person");
    expect(actorKindOf(dir, "human://sre-lead/erin")).toBe("person");
    expect(actorKindOf(dir, "agent://oncall/bob")).toBe("agent");
    expect(actorKindOf(dir, "_runtime")).toBe("runtime");
  });

  it("offers pickers without disabled people, viewers, unknown roles or oneself", () => {
    expect(dir.people.map((p) => p.username)).not.toContain("weird");
    expect(participantChoices(dir, "human:alice").people.map((p) => p.username)).toEqual(["carol", "ops"]);
    expect(participantChoices(dir, "human:alice").agents).toEqual(["agent://b", "agent://a"]);
    expect(approverChoices(dir).map((p) => p.username)).toEqual(["carol"]);
  });
});

describe("directoryFromPeople", () => {
  it("names people by display name and leaves everyone else to the short id", () => {
    const dir = directoryFromPeople([
      { participantId: "human:alice", displayName: "Alice Ng", role: "operator" },
      { participantId: "human:ghost", displayName: "Ghost", role: "superuser" },
      { participantId: "", displayName: "Nobody", role: "viewer" },
    ]);
    expect(nameIn(dir, "human:alice")).toBe("Alice Ng");
    expect(actorKindOf(dir, "human:alice")).toBe("person");
    expect(nameIn(dir, "human:ghost")).not.toBe("Ghost");
    expect(nameIn(dir, "agent://oncall/pager-bot")).toBe("oncall/pager-bot");
    expect(dir.people).toHaveLength(1);
  });
});
