// decide() for v0.1 file handoffs: the MACP task roles on a file's snapshot.
import { describe, expect, it } from "vitest";
import { FILE_ACTIONS, decide, type FileAction, type FileHandoffFacts } from "@/lib/authz/decide";
import { ROLES } from "@/lib/authz/roles";
import type { HandoffStatus } from "@/lib/handoff-files/record";

const ALICE = "human:alice";
const BOB = "human:bob";
const op = (participantId: string) => ({ role: "operator" as const, participantId });
const file = (status: HandoffStatus, fromAgent: string, toAgent: string, over: Partial<FileHandoffFacts> = {}): FileHandoffFacts => ({
  present: true,
  valid: true,
  status,
  fromAgent,
  toAgent,
  ...over,
});
const allowed = (who: string, f: FileHandoffFacts): FileAction[] =>
  FILE_ACTIONS.filter((a) => a !== "fileOffer" && decide(op(who), undefined, a, { file: f }).allowed);

describe("decide: v0.1 file handoffs", () => {
  it("offered to anyone: anyone but the offerer accepts or turns it down", () => {
    const f = file("offered", ALICE, "");
    expect(allowed(BOB, f)).toEqual(["fileAccept", "fileReject"]);
    expect(allowed(ALICE, f)).toEqual([]);
    expect(decide(op(ALICE), undefined, "fileAccept", { file: f })).toMatchObject({
      code: "authority",
      reason: "You offered this handoff; someone else has to accept it.",
    });
  });

  it("offered to someone: only they answer", () => {
    const f = file("offered", "agent://planner", BOB);
    expect(allowed(BOB, f)).toEqual(["fileAccept", "fileReject"]);
    expect(allowed(ALICE, f)).toEqual([]);
    const d = decide(op(ALICE), undefined, "fileReject", { file: f, nameOf: (id) => (id === BOB ? "Bob Ito" : undefined) });
    expect(d).toMatchObject({ code: "authority", reason: "This handoff is offered to Bob Ito; only they can turn it down." });
  });

  it("accepted: only who accepted completes or fails it", () => {
    const f = file("accepted", ALICE, BOB);
    expect(allowed(BOB, f)).toEqual(["fileComplete", "fileFail"]);
    expect(allowed(ALICE, f)).toEqual([]);
  });

  it("failed: only the offerer offers it again; final states allow nothing", () => {
    expect(allowed(ALICE, file("failed", ALICE, BOB))).toEqual(["fileReoffer"]);
    expect(allowed(BOB, file("failed", ALICE, BOB))).toEqual([]);
    for (const s of ["completed", "rejected"] as const) {
      expect(allowed(ALICE, file(s, ALICE, BOB))).toEqual([]);
      expect(allowed(BOB, file(s, ALICE, BOB))).toEqual([]);
    }
    expect(decide(op(BOB), undefined, "fileAccept", { file: file("completed", ALICE, BOB) })).toMatchObject({
      code: "state",
      reason: "This handoff is completed by you; it can only be accepted while it is offered.",
    });
  });

  it("invalid, removed or unknown files allow nothing", () => {
    expect(decide(op(BOB), undefined, "fileAccept", { file: file("offered", ALICE, "", { valid: false }) })).toMatchObject({
      code: "state",
    });
    expect(decide(op(BOB), undefined, "fileAccept", { file: file("offered", ALICE, "", { present: false }) })).toMatchObject({
      code: "not_found",
    });
    expect(decide(op(BOB), undefined, "fileAccept", {})).toMatchObject({ code: "not_found" });
  });

  it("offers: operators and up, never to oneself", () => {
    for (const role of ROLES) {
      expect(decide({ role, participantId: ALICE }, undefined, "fileOffer").allowed).toBe(role !== "viewer");
    }
    expect(decide(op(ALICE), undefined, "fileOffer", { fileOffer: { toAgent: ALICE } })).toMatchObject({ code: "invalid" });
    expect(decide(op(ALICE), undefined, "fileOffer", { fileOffer: { toAgent: "has space" } })).toMatchObject({ code: "invalid" });
    expect(decide(op(ALICE), undefined, "fileOffer", { fileOffer: { toAgent: BOB } }).allowed).toBe(true);
  });

  it("viewers never act; every reason is a sentence", () => {
    const statuses: HandoffStatus[] = ["offered", "accepted", "completed", "failed", "rejected"];
    for (const s of statuses) {
      for (const to of ["", BOB, ALICE]) {
        const f = file(s, ALICE, to);
        for (const a of FILE_ACTIONS) {
          expect(decide({ role: "viewer", participantId: BOB }, undefined, a, { file: f }).allowed).toBe(false);
          for (const who of [ALICE, BOB]) {
            const d = decide({ role: "admin", participantId: who }, undefined, a, { file: f });
            if (!d.allowed) expect(d.reason).toMatch(/^[A-Z"].*\.$/);
          }
        }
      }
    }
  });
});
