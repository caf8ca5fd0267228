import { describe, expect, it } from "vitest";
import { expectedOutcome, inferOutcomePositive, isOutcomeConsistent } from "@/lib/macp/outcome";

describe("commitment outcome suffix rule (§3.6 g)", () => {
  it.each([
    ["handoff.declined", false],
    ["task.failed", false],
    ["decision.rejected", false],
    ["handoff.accepted", true],
    ["task.completed", true],
    ["decision.selected", true],
    ["quorum.approved", true],
    ["handoff.no_target", undefined],
    ["task.Completed", undefined],
    ["", undefined],
  ] as const)("%s → %s", (action, expected) => {
    expect(expectedOutcome(action)).toBe(expected);
  });

  it("matches on the exact end of the string, so 'unaccepted' counts as accepted", () => {
    expect(expectedOutcome("x.unaccepted")).toBe(true);
    expect(expectedOutcome("declined.later")).toBe(undefined);
  });

  it("infers the SDK default: false only for negative suffixes", () => {
    expect(inferOutcomePositive("task.failed")).toBe(false);
    expect(inferOutcomePositive("handoff.declined")).toBe(false);
    expect(inferOutcomePositive("handoff.accepted")).toBe(true);
    expect(inferOutcomePositive("handoff.no_target")).toBe(true);
  });

  it("checks consistency", () => {
    expect(isOutcomeConsistent("task.completed", false)).toBe(false);
    expect(isOutcomeConsistent("task.completed", true)).toBe(true);
    expect(isOutcomeConsistent("handoff.no_target", false)).toBe(true);
  });
});
