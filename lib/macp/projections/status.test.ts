import { describe, expect, it } from "vitest";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { PHASE_ORDER } from "@/lib/gateway/catalog/query";
import {
  DEFAULT_STUCK_AFTER_MS,
  parseStuckAfter,
  phaseStatus,
  sessionStatus,
  STATUS_KEYS,
  stuckFor,
  stuckLabel,
  stuckSince,
  type StatusKey,
  type StuckFacts,
} from "./status";

const PHASES = [...PHASE_ORDER, "", "SomethingNew"];
const OUTCOMES = ["", "positive", "negative"];
const DETAILS = ["", "awaiting_approval", "rejected"];
const STATES = [0, SessionState.OPEN, SessionState.SUSPENDED, SessionState.RESOLVED, SessionState.EXPIRED, SessionState.CANCELLED];

/** The open status of each phase, with no detail and no outcome. */
const OPEN_STATUS: Record<string, StatusKey> = {
  Pending: "started",
  OfferPending: "offered",
  ContextSharing: "offered",
  Accepted: "accepted",
  Declined: "declined",
  Committed: "committed",
  Requested: "requested",
  InProgress: "in_progress",
  Completed: "completed",
  Failed: "failed",
  "": "unknown",
  SomethingNew: "unknown",
};

describe("sessionStatus: lifecycle and phase merged", () => {
  it("covers every state × phase × outcome × detail with one of the known keys, by the rules", () => {
    let n = 0;
    for (const state of STATES) {
      for (const phase of PHASES) {
        for (const outcome of OUTCOMES) {
          for (const detail of DETAILS) {
            n++;
            const got = sessionStatus({ state, phase, outcome, detail });
            expect(STATUS_KEYS).toContain(got);
            const where = `${state}/${phase}/${outcome}/${detail}`;
            if (state === SessionState.EXPIRED) expect(got, where).toBe("expired");
            else if (state === SessionState.CANCELLED) expect(got, where).toBe("cancelled");
            else if (state === SessionState.SUSPENDED) expect(got, where).toBe("suspended");
            else if (state === SessionState.RESOLVED) {
              const expected =
                phase === "Committed" || outcome !== "" ? (outcome === "negative" ? "committed_negative" : "committed") : "resolved";
              expect(got, where).toBe(expected);
            } else {
              // Open (or not reported yet): the phase, refined by its detail and outcome.
              let expected = OPEN_STATUS[phase] as StatusKey;
              if (phase === "Accepted" && detail === "awaiting_approval") expected = "awaiting_approval";
              if (phase === "Requested" && detail === "rejected") expected = "rejected";
              if (phase === "Committed" && outcome === "negative") expected = "committed_negative";
              expect(got, where).toBe(expected);
            }
          }
        }
      }
    }
    expect(n).toBe(STATES.length * PHASES.length * OUTCOMES.length * DETAILS.length);
  });

  it("reads the detail only where it applies", () => {
    expect(phaseStatus({ phase: "Declined", outcome: "", detail: "awaiting_approval" })).toBe("declined");
    expect(phaseStatus({ phase: "InProgress", outcome: "", detail: "rejected" })).toBe("in_progress");
    expect(phaseStatus({ phase: "Accepted", outcome: "", detail: "rejected" })).toBe("accepted");
  });
});

const T0 = 1_800_000_000_000;
const MIN = 60_000;

function facts(p: Partial<StuckFacts>): StuckFacts {
  return { state: SessionState.OPEN, phase: "OfferPending", outcome: "", detail: "", phaseSinceMs: T0, lastActivityMs: T0, ...p };
}

describe("the stuck rule", () => {
  it("an offer unanswered or an approval pending longer than the threshold is stuck; nothing else is", () => {
    for (const state of STATES) {
      for (const phase of PHASES) {
        for (const detail of DETAILS) {
          const f = facts({ state, phase, detail });
          const status = sessionStatus(f);
          const canStick = (state === SessionState.OPEN || state === 0) && (status === "offered" || status === "awaiting_approval");
          expect(stuckSince(f), `${state}/${phase}/${detail}`).toBe(canStick ? T0 : undefined);
          expect(stuckFor(f, T0 + 20 * MIN, 15 * MIN) !== undefined, `${state}/${phase}/${detail}`).toBe(canStick);
        }
      }
    }
  });

  it("counts from the start of the status, at the threshold and not before", () => {
    const f = facts({ phase: "ContextSharing", phaseSinceMs: T0, lastActivityMs: T0 + 5 * MIN });
    expect(stuckFor(f, T0 + 15 * MIN - 1, 15 * MIN)).toBeUndefined();
    expect(stuckFor(f, T0 + 15 * MIN, 15 * MIN)).toBe(15 * MIN);
    expect(stuckFor(f, T0 + 23 * MIN + 30_000, 15 * MIN)).toBe(23 * MIN + 30_000);
    expect(stuckFor(facts({ phase: "Accepted", detail: "awaiting_approval" }), T0 + 16 * MIN, 15 * MIN)).toBe(16 * MIN);
    // Accepted without an approval pending waits on the owner's commit: not "stuck" by this rule.
    expect(stuckFor(facts({ phase: "Accepted" }), T0 + 60 * MIN, 15 * MIN)).toBeUndefined();
  });

  it("a row without the status start counts from its last activity (later, never sooner); nothing known: not stuck", () => {
    expect(stuckSince(facts({ phaseSinceMs: 0, lastActivityMs: T0 + MIN }))).toBe(T0 + MIN);
    expect(stuckSince(facts({ phaseSinceMs: 0, lastActivityMs: 0 }))).toBeUndefined();
  });

  it("labels the wait in whole minutes, then hours, then days", () => {
    expect(stuckLabel(23 * MIN + 59_000)).toBe("Stuck 23 min");
    expect(stuckLabel(0)).toBe("Stuck <1 min");
    expect(stuckLabel(59_999)).toBe("Stuck <1 min");
    expect(stuckLabel(60 * MIN)).toBe("Stuck 1 h");
    expect(stuckLabel(125 * MIN)).toBe("Stuck 2 h 5 min");
    expect(stuckLabel(72 * 60 * MIN)).toBe("Stuck 3 d");
  });
});

describe("parseStuckAfter (BATON_STUCK_AFTER_MINUTES)", () => {
  it("defaults to 15 minutes and takes positive minutes, decimals too", () => {
    expect(parseStuckAfter(undefined)).toBe(DEFAULT_STUCK_AFTER_MS);
    expect(parseStuckAfter(" ")).toBe(DEFAULT_STUCK_AFTER_MS);
    expect(parseStuckAfter("30")).toBe(30 * MIN);
    expect(parseStuckAfter("0.05")).toBe(3_000);
  });

  it("refuses anything else, naming the variable", () => {
    for (const bad of ["0", "-5", "abc", "15m", "1e3", "Infinity", "999999999"]) {
      expect(() => parseStuckAfter(bad), bad).toThrow(/BATON_STUCK_AFTER_MINUTES must be a positive number/);
    }
  });
});
