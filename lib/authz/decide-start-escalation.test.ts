import { describe, expect, it } from "vitest";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { decide, type DecideContext } from "@/lib/authz/decide";
import { ACTORS, ALICE, BOB, CAROL, HANDOFF, NOW, acceptOffer, offer, start, view } from "./__fixtures__/decide-kit";

describe("decide: startSession", () => {
  const op = ACTORS.alice;
  it("checks role, mode and participants", () => {
    expect(decide(op, undefined, "startSession").allowed).toBe(true);
    expect(decide(op, undefined, "startSession", { start: { mode: HANDOFF_MODE, participants: [ALICE, BOB] } }).allowed).toBe(true);
    expect(decide(ACTORS.vic, undefined, "startSession").allowed).toBe(false);
    const cases: Array<[DecideContext["start"], string]> = [
      [{ mode: "macp.mode.decision.v1" }, "Baton can only start handoff and task sessions."],
      [{ participants: [ALICE] }, "Add at least one other participant."],
      [{ participants: [BOB, CAROL] }, "You (human:alice) must be one of the participants, because you start the session."],
      [{ participants: [ALICE, BOB, BOB] }, "human:bob is listed twice."],
      [{ participants: [ALICE, " "] }, "A participant id is empty."],
      [{ participants: [ALICE, "bad id"] }, '"bad id" isn\'t a valid participant id (no spaces, at most 512 characters).'],
    ];
    for (const [start, reason] of cases) {
      const d = decide(op, undefined, "startSession", { start });
      expect(d).toMatchObject({ allowed: false, reason });
    }
  });

  it("refuses accounts without a participant id", () => {
    expect(decide({ role: "admin", participantId: "" }, undefined, "startSession")).toMatchObject({ allowed: false, code: "no_identity" });
    expect(decide({ role: "admin", participantId: "" }, undefined, "manageUsers").allowed).toBe(true);
    expect(decide({ role: "operator", participantId: "_runtime" }, HANDOFF.pending!.view, "accept").allowed).toBe(false);
  });
});

describe("decide: escalation", () => {
  it("only the owner escalates, and only while their offer waits", () => {
    const pending = view([start(HANDOFF_MODE), offer()]);
    expect(decide(ACTORS.alice, pending, "escalate", { now: NOW }).allowed).toBe(true);
    expect(decide(ACTORS.bob, pending, "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "authority" });
    expect(decide(ACTORS.vic, pending, "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "role" });
    const accepted = view([start(HANDOFF_MODE), offer(), acceptOffer()]);
    expect(decide(ACTORS.alice, accepted, "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "state" });
    expect(decide(ACTORS.alice, view([start(HANDOFF_MODE)]), "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "state" });
    expect(decide(ACTORS.alice, pending, "escalate", { now: NOW, lifecycle: "Cancelled" })).toMatchObject({
      allowed: false,
      code: "not_open",
    });
  });

  it("an escalation is cancelled by its owner or an admin", () => {
    const ctx = { escalation: { owner: ALICE } };
    expect(decide(ACTORS.alice, undefined, "cancelEscalation", ctx).allowed).toBe(true);
    expect(decide(ACTORS.root, undefined, "cancelEscalation", ctx).allowed).toBe(true);
    expect(decide(ACTORS.bob, undefined, "cancelEscalation", ctx)).toMatchObject({ allowed: false, code: "authority" });
    expect(decide(ACTORS.vic, undefined, "cancelEscalation", ctx)).toMatchObject({ allowed: false, code: "role" });
  });
});
