import { describe, expect, it } from "vitest";
import { ENVELOPE_OVERHEAD_BYTES, LIMITS } from "@/lib/actions/rules";
import { PolicyChoice, SessionKind } from "@/lib/gen/baton/v1/actions_pb";
import {
  handOffValuesOf,
  readRunbookFile,
  runbookRoom,
  validateHandOff,
  validateNewSession,
  validateTemplate,
  type NewSessionValues,
} from "@/lib/client/start-forms";
import { jsonProblem } from "@/lib/client/form-wording";

const ME = "human:alice";
const BASE: NewSessionValues = {
  kind: "handoff",
  intent: "payments on-call",
  scope: "",
  participants: ["human:bob"],
  ttlMinutes: "60",
  policy: "default",
  approvers: [],
  implicitAcceptSeconds: "300",
  frozenContext: "",
};

describe("validateNewSession", () => {
  it("builds a StartSession request", () => {
    const r = validateNewSession(
      { ...BASE, intent: "  payments on-call  ", participants: ["human:bob", ME, "human:bob", " agent://x "], ttlMinutes: "30" },
      ME,
    );
    expect(r).toEqual({
      ok: true,
      value: {
        kind: SessionKind.HANDOFF,
        intent: "payments on-call",
        scope: "",
        participants: ["human:bob", "agent://x"],
        ttlMs: 1_800_000,
        policy: PolicyChoice.DEFAULT,
        approvers: [],
        implicitAcceptTimeoutMs: 0,
        frozenContextJson: "",
      },
    });
  });

  it("explains every wrong field", () => {
    const r = validateNewSession({ ...BASE, intent: " ", participants: [], ttlMinutes: "2000", frozenContext: "{oops" }, ME);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.intent).toBe("Enter what the session is for.");
    expect(r.errors.participants).toBe("Add at least one other participant.");
    expect(r.errors.ttlMinutes).toBe("Enter a time to live in minutes from 1 to 1,440.");
    expect(r.errors.frozenContext).toMatch(/^This isn't valid JSON/);
    const spaces = validateNewSession({ ...BASE, participants: ["agent with spaces"] }, ME);
    expect(!spaces.ok && spaces.errors.participants).toMatch(/isn't a participant id/);
    const long = validateNewSession({ ...BASE, intent: "x".repeat(501) }, ME);
    expect(!long.ok && long.errors.intent).toMatch(/at most 500/);
    const twoLines = validateNewSession({ ...BASE, scope: "a\nb" }, ME);
    expect(!twoLines.ok && twoLines.errors.scope).toBe("Keep it on one line.");
  });

  it("handles the policy choices", () => {
    const lead = validateNewSession({ ...BASE, policy: "approval", approvers: ["human:carol", "human:carol"] }, ME);
    expect(lead.ok && lead.value).toMatchObject({ policy: PolicyChoice.LEAD_APPROVAL, approvers: ["human:carol"] });
    const none = validateNewSession({ ...BASE, policy: "approval" }, ME);
    expect(!none.ok && none.errors.approvers).toBe("Choose at least one approver.");
    // An approver alone is another participant (the server adds approvers to the session).
    expect(validateNewSession({ ...BASE, participants: [], policy: "approval", approvers: ["human:carol"] }, ME).ok).toBe(true);
    const implicit = validateNewSession({ ...BASE, policy: "implicit", implicitAcceptSeconds: "90" }, ME);
    expect(implicit.ok && implicit.value).toMatchObject({ policy: PolicyChoice.IMPLICIT_ACCEPT, implicitAcceptTimeoutMs: 90_000 });
    const task = validateNewSession({ ...BASE, kind: "task", policy: "implicit" }, ME);
    expect(!task.ok && task.errors.policy).toMatch(/only exists for handoffs/);
    const zero = validateNewSession({ ...BASE, policy: "implicit", implicitAcceptSeconds: "0" }, ME);
    expect(!zero.ok && zero.errors.implicitAcceptSeconds).toMatch(/from 1 to 86,400/);
  });

  it("checks frozen context size and syntax", () => {
    expect(jsonProblem('{"incident":"INC-1"}', 100)).toBeUndefined();
    expect(jsonProblem("", 100)).toBeUndefined();
    expect(jsonProblem(`"${"x".repeat(200)}"`, 100)).toMatch(/at most 100 B fit/);
  });
});

describe("hand off (one dialog)", () => {
  const form = {
    target: "human:bob",
    scope: "payments-api primary on-call",
    reason: "end of my rotation",
    runbook: "# Runbook\n\n1. Check.",
    ttlMinutes: "90",
    policy: "approval" as const,
    approvers: ["human:carol"],
    implicitAcceptSeconds: "300",
  };

  it("makes the start, the offer and the runbook from one form", () => {
    const r = validateHandOff(form, "human:alice", 1_048_576);
    expect(r).toEqual({
      ok: true,
      value: {
        start: {
          kind: SessionKind.HANDOFF,
          intent: form.scope,
          scope: form.scope,
          participants: ["human:bob"],
          ttlMs: 5_400_000,
          policy: PolicyChoice.LEAD_APPROVAL,
          approvers: ["human:carol"],
          implicitAcceptTimeoutMs: 0,
          frozenContextJson: "",
        },
        offer: { target: "human:bob", scope: form.scope, reason: form.reason },
        runbook: form.runbook,
        escalation: [],
      },
    });
    const blank = validateHandOff({ ...form, runbook: "  \n" }, "human:alice", 1_048_576);
    expect(blank.ok && blank.value.runbook).toBe("");
  });

  it("turns the escalation fields into the contract's chain, with problems under their fields", () => {
    const on = {
      ...form,
      escalate: true,
      escalateNotify: ["human:carol"],
      escalateNotifyMinutes: "15",
      escalateReofferTo: "human:dave",
      escalateReofferMinutes: "10",
    };
    const r = validateHandOff(on, "human:alice", 1_048_576);
    expect(r.ok && r.value.escalation).toEqual([
      { kind: "notify", afterMinutes: 15, participants: ["human:carol"] },
      { kind: "reoffer", afterMinutes: 10, participants: ["human:dave"] },
    ]);
    expect(validateHandOff({ ...on, escalate: false }, "human:alice", 1_048_576)).toMatchObject({ ok: true, value: { escalation: [] } });
    const none = validateHandOff({ ...on, escalateNotify: [], escalateReofferTo: "" }, "human:alice", 1_048_576);
    expect(!none.ok && none.errors.escalate).toBe("Choose whom to tell, whom to re-offer to, or both.");
    const minutes = validateHandOff({ ...on, escalateReofferMinutes: "1.5" }, "human:alice", 1_048_576);
    expect(!minutes.ok && minutes.errors.escalateReofferMinutes).toMatch(/whole minutes/);
    const same = validateHandOff({ ...on, escalateReofferTo: "human:bob" }, "human:alice", 1_048_576);
    expect(!same.ok && same.errors.escalateReofferTo).toBe("Already has the offer at that point.");
  });

  it("says what is wrong, field by field, by the action contract", () => {
    const r = validateHandOff({ ...form, target: "", scope: "", approvers: [], ttlMinutes: "0" }, "human:alice", 1_048_576);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toMatchObject({
      target: "Choose who takes it over.",
      scope: "Enter what you hand over.",
      approvers: "Choose at least one approver.",
    });
    expect(r.errors.ttlMinutes).toMatch(/time to live/);
    const self = validateHandOff({ ...form, target: "human:alice" }, "human:alice", 1_048_576);
    expect(!self.ok && self.errors.target).toMatch(/someone else/);
  });

  it("bounds the runbook by the contract and by the runtime's message limit, whichever is lower", () => {
    expect(runbookRoom(1_048_576)).toBe(LIMITS.runbookBytes);
    expect(runbookRoom(10_000)).toBe(10_000 - ENVELOPE_OVERHEAD_BYTES);
    const big = validateHandOff({ ...form, runbook: "x".repeat(LIMITS.runbookBytes + 1) }, "human:alice", 1_048_576);
    expect(!big.ok && big.errors.runbook).toBe("The runbook is 128.0 KB; at most 128.0 KB fit.");
    const small = validateHandOff({ ...form, runbook: "x".repeat(9_000) }, "human:alice", 10_000);
    expect(!small.ok && small.errors.runbook).toMatch(/fit/);
  });

  it("reads .md and .txt runbook files as UTF-8 text, and refuses others", () => {
    const bytes = new TextEncoder().encode("# Runbook\n");
    expect(readRunbookFile("runbook.md", bytes, 1_048_576)).toEqual({ ok: true, value: "# Runbook\n" });
    expect(readRunbookFile("notes.TXT", bytes, 1_048_576)).toEqual({ ok: true, value: "# Runbook\n" });
    expect(readRunbookFile("page.html", bytes, 1_048_576)).toEqual({
      ok: false,
      errors: { runbook: "page.html: Choose a .md, .markdown or .txt file." },
    });
    expect(readRunbookFile("a.md", new Uint8Array([0xff, 0xfe, 0x00]), 1_048_576)).toEqual({
      ok: false,
      errors: { runbook: "a.md is not UTF-8 text." },
    });
    expect(readRunbookFile("a.md", new Uint8Array(), 1_048_576)).toEqual({ ok: false, errors: { runbook: "a.md is empty." } });
  });

  it("adds who else is on the rotation to the session (not the offer), by the contract", () => {
    const r = validateHandOff(
      { ...form, rotation: ["human:dave", " human:erin ", "human:bob", "human:alice", "human:dave", ""] },
      "human:alice",
      1_048_576,
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // The target first, then the rest of the rotation; the owner, the target again, repeats and blanks left out.
    expect(r.value.start.participants).toEqual(["human:bob", "human:dave", "human:erin"]);
    expect(r.value.offer.target).toBe("human:bob");
    const bad = validateHandOff({ ...form, rotation: ["human:dave", "has space"] }, "human:alice", 1_048_576);
    expect(bad).toMatchObject({ ok: false, errors: { rotation: expect.stringMatching(/has space/) } });
    const many = Array.from({ length: LIMITS.rotation + 1 }, (_, i) => `human:p${i}`);
    expect(validateHandOff({ ...form, rotation: many }, "human:alice", 1_048_576)).toEqual({
      ok: false,
      errors: { rotation: `Choose at most ${LIMITS.rotation} (${LIMITS.rotation + 1} chosen).` },
    });
    expect(validateHandOff({ ...form, rotation: many.slice(1) }, "human:alice", 1_048_576).ok).toBe(true);
    // Kept in a template and prefilled from it.
    const t = validateTemplate({ ...form, rotation: ["human:dave", "human:bob"] }, "Weekly", "");
    expect(t).toMatchObject({ ok: true, value: { participants: ["human:dave"] } });
    if (t.ok) expect(handOffValuesOf(t.value).rotation).toEqual(["human:dave"]);
    expect(validateTemplate({ ...form, rotation: many }, "Weekly", "")).toMatchObject({
      ok: false,
      errors: { rotation: expect.any(String) },
    });
  });

  it("saves the form as a template (only the name is required) and reads it back", () => {
    const t = validateTemplate(form, " Weekly ", "");
    expect(t.ok).toBe(true);
    if (!t.ok) return;
    expect(t.value).toMatchObject({
      name: "Weekly",
      target: "human:bob",
      ttlMs: 5_400_000,
      policy: PolicyChoice.LEAD_APPROVAL,
      approvers: ["human:carol"],
    });
    expect(handOffValuesOf(t.value)).toEqual({ ...form, rotation: [] });
    expect(validateTemplate({ ...form, target: "" }, "", "")).toEqual({
      ok: false,
      errors: { templateName: "Enter a name for the template." },
    });
    expect(validateTemplate(form, "x".repeat(LIMITS.templateName + 1), "").ok).toBe(false);
  });
});
