import { describe, expect, it } from "vitest";
import { MAX_TTL_MS } from "@/lib/macp/constants";
import {
  checkRotation,
  checkContentType,
  checkContextBytes,
  checkJsonText,
  checkLink,
  checkMarkdown,
  checkParticipant,
  checkRecordId,
  checkText,
  formFieldOf,
  LIMITS,
  TEXT_FIELDS,
  checkRunbook,
  checkRunbookFileName,
  runbookFileText,
  checkEscalationChain,
} from "./rules";

describe("the action contract", () => {
  it("checks text: trimmed, required, length, control characters, one line, pattern, in that order", () => {
    const rule = TEXT_FIELDS.status.rule;
    expect(checkText("  in_progress ", rule)).toEqual({ value: "in_progress" });
    expect(checkText("   ", { max: 5, required: true })).toEqual({ value: "", problem: { code: "required" } });
    expect(checkText("   ", { max: 5 })).toEqual({ value: "" });
    expect(checkText("x".repeat(65), rule).problem).toEqual({ code: "too-long", length: 65, max: 64 });
    expect(checkText("a\u0007b", rule).problem).toEqual({ code: "control" });
    expect(checkText("a\nb", TEXT_FIELDS.scope.rule).problem).toEqual({ code: "line-break" });
    expect(checkText("a\nb", TEXT_FIELDS.reason.rule)).toEqual({ value: "a\nb" });
    expect(checkText("two words", rule).problem).toEqual({ code: "pattern" });
    expect(checkText("upstream:503", TEXT_FIELDS.errorCode.rule)).toEqual({ value: "upstream:503" });
  });

  it("checks participants, record ids and JSON", () => {
    expect(checkParticipant(" agent://x ")).toEqual({ value: "agent://x" });
    expect(checkParticipant("", false)).toEqual({ value: "" });
    expect(checkParticipant("").problem).toEqual({ code: "required" });
    expect(checkParticipant("has space").problem).toEqual({ code: "not-participant" });
    expect(checkRecordId("h 1").problem).toEqual({ code: "spaces" });
    expect(checkRecordId("x".repeat(257)).problem).toEqual({ code: "too-long", length: 257, max: 256 });
    expect(checkJsonText(" ", 10)).toEqual({ value: "" });
    expect(checkJsonText('{"a":1}', 3).problem).toEqual({ code: "too-large", bytes: 7, max: 3 });
    expect(checkJsonText("{", 10).problem?.code).toBe("not-json");
  });

  it("checks links: http(s) only, no credentials, normalised", () => {
    expect(checkLink(" https://wiki.example.com/run book ")).toEqual({ value: "https://wiki.example.com/run%20book" });
    expect(checkLink("javascript:alert(1)").problem).toEqual({ code: "url-scheme" });
    expect(checkLink("https://u:p@example.com").problem).toEqual({ code: "url-credentials" });
    expect(checkLink("not a url").problem).toEqual({ code: "not-url" });
    expect(checkLink(`https://e.com/${"x".repeat(LIMITS.link)}`).problem?.code).toBe("too-long");
  });

  it("checks content types and context bytes, refusing types browsers run scripts in", () => {
    expect(checkContentType("Text/Markdown; charset=utf-8")).toEqual({ value: "text/markdown; charset=utf-8", essence: "text/markdown" });
    expect(checkContentType("image/SVG+xml").problem).toEqual({ code: "active-type", essence: "image/svg+xml" });
    expect(checkContentType("markdown").problem).toEqual({ code: "not-mime" });
    expect(checkContextBytes(new Uint8Array(), "text/plain", 10)).toEqual({ code: "required" });
    expect(checkContextBytes(new Uint8Array([0xff, 0xfe]), "text/plain", 10)).toEqual({ code: "not-utf8" });
    expect(checkContextBytes(new Uint8Array([0xff, 0xfe]), "application/pdf", 10)).toBeUndefined();
    expect(checkContextBytes(new Uint8Array(11), "application/pdf", 10)).toEqual({ code: "too-large", bytes: 11, max: 10 });
    expect(checkMarkdown("# Runbook", 100)).toBeUndefined();
    expect(checkMarkdown("a\u0000b", 100)).toEqual({ code: "nul" });
  });

  it("maps request fields to form fields, and keeps the protocol's TTL bound", () => {
    expect(formFieldOf("participants[2]")).toBe("participants");
    expect(formFieldOf("content.file.content_type")).toBe("file");
    expect(formFieldOf("authority_scope")).toBe("authorityScope");
    expect(formFieldOf("error_code")).toBe("errorCode");
    expect(formFieldOf("intent")).toBe("intent");
    expect(LIMITS.maxTtlMs).toBe(MAX_TTL_MS);
  });
});

describe("runbooks and templates (Hand off…)", () => {
  it("takes .md, .markdown and .txt files, any case, and nothing else", () => {
    for (const ok of ["a.md", "B.MARKDOWN", "notes.txt"]) expect(checkRunbookFileName(ok)).toBeUndefined();
    for (const bad of ["a.html", "a.svg", "runbook", "a.md.exe"]) expect(checkRunbookFileName(bad)).toEqual({ code: "runbook-file" });
  });
  it("bounds a runbook by the contract, or by a lower limit", () => {
    expect(checkRunbook("   ")).toBeUndefined();
    expect(checkRunbook("x".repeat(LIMITS.runbookBytes))).toBeUndefined();
    expect(checkRunbook("x".repeat(LIMITS.runbookBytes + 1))).toEqual({
      code: "too-large",
      bytes: LIMITS.runbookBytes + 1,
      max: LIMITS.runbookBytes,
    });
    expect(checkRunbook("x".repeat(11), 10)).toEqual({ code: "too-large", bytes: 11, max: 10 });
    // A higher limit never raises the contract's.
    expect(checkRunbook("x".repeat(LIMITS.runbookBytes + 1), 10 * LIMITS.runbookBytes)?.code).toBe("too-large");
    expect(checkRunbook("a\u0000b")).toEqual({ code: "nul" });
  });
  it("reads a runbook file as UTF-8 text, dropping a byte-order mark", () => {
    expect(runbookFileText(new Uint8Array([0xef, 0xbb, 0xbf, 0x23, 0x20, 0x52]))).toEqual({ value: "# R" });
    expect(runbookFileText(new Uint8Array([0xc3, 0x28])).problem).toEqual({ code: "not-utf8" });
    expect(runbookFileText(new Uint8Array()).problem).toEqual({ code: "required" });
    expect(runbookFileText(new Uint8Array(11), 10).problem).toEqual({ code: "too-large", bytes: 11, max: 10 });
  });
  it("maps a template's name problems to the form's field", () => {
    expect(formFieldOf("name")).toBe("templateName");
    expect(checkText("", TEXT_FIELDS.templateName.rule).problem).toEqual({ code: "required" });
    expect(checkText("a\nb", TEXT_FIELDS.templateName.rule).problem).toEqual({ code: "line-break" });
  });
});

describe("the escalation chain's schema", () => {
  const ctx = { owner: "human:alice", firstTarget: "human:bob" };
  const notify = (afterMinutes = 15, participants = ["human:carol"]) => ({ kind: "notify" as const, afterMinutes, participants });
  const reoffer = (to: string, afterMinutes = 15) => ({ kind: "reoffer" as const, afterMinutes, participants: [to] });

  it("takes notify-then-reoffer chains, trimming ids and dropping repeats", () => {
    const c = checkEscalationChain(
      [notify(15, [" human:carol ", "human:carol", "human:erin"]), reoffer("human:dave", 10), reoffer("human:erin", 10)],
      ctx,
    );
    expect(c.problem).toBeUndefined();
    expect(c.value).toEqual([notify(15, ["human:carol", "human:erin"]), reoffer("human:dave", 10), reoffer("human:erin", 10)]);
  });

  it("refuses an empty or too long chain", () => {
    expect(checkEscalationChain([], ctx).problem).toEqual({ field: "steps", problem: { code: "required" } });
    const long = Array.from({ length: LIMITS.escalationSteps + 1 }, () => notify());
    expect(checkEscalationChain(long, ctx).problem?.field).toBe("steps");
  });

  it("needs whole minutes within the bounds", () => {
    for (const m of [0, -1, 1.5, LIMITS.escalationMaxMinutes + 1, Number.NaN]) {
      expect(checkEscalationChain([notify(m)], ctx).problem?.field).toBe("steps[0].after_minutes");
    }
    expect(checkEscalationChain([notify(LIMITS.escalationMinMinutes), notify(LIMITS.escalationMaxMinutes)], ctx).problem).toBeUndefined();
  });

  it("a notify names 1 to 20 valid ids; a re-offer exactly one new person", () => {
    expect(checkEscalationChain([notify(5, [])], ctx).problem?.field).toBe("steps[0].participants");
    expect(checkEscalationChain([notify(5, ["not an id"])], ctx).problem).toEqual({
      field: "steps[0].participants[0]",
      problem: { code: "not-participant" },
    });
    expect(
      checkEscalationChain(
        [
          notify(
            5,
            Array.from({ length: 21 }, (_, i) => `human:p${i}`),
          ),
        ],
        ctx,
      ).problem?.field,
    ).toBe("steps[0].participants");
    expect(
      checkEscalationChain([{ kind: "reoffer", afterMinutes: 5, participants: ["human:dave", "human:erin"] }], ctx).problem?.field,
    ).toBe("steps[0].participants");
    expect(checkEscalationChain([reoffer("human:alice")], ctx).problem?.field).toBe("steps[0].participants[0]");
    expect(checkEscalationChain([reoffer("human:bob")], ctx).problem?.problem).toEqual({
      code: "escalation",
      detail: "already has the offer at that point",
    });
    expect(checkEscalationChain([reoffer("human:dave"), reoffer("human:bob")], ctx).problem?.problem).toEqual({
      code: "escalation",
      detail: "was offered to earlier in the chain",
    });
    expect(checkEscalationChain([{ kind: "page" as "notify", afterMinutes: 5, participants: ["human:carol"] }], ctx).problem?.field).toBe(
      "steps[0].kind",
    );
  });
});

describe("checkRotation (Hand off…: also on the rotation)", () => {
  it("trims, drops blanks, repeats, the owner and the target, and bounds the count", () => {
    expect(
      checkRotation([" human:dave ", "", "human:dave", "human:alice", "human:bob", "agent://ops/a"], {
        owner: "human:alice",
        target: "human:bob",
      }),
    ).toEqual({
      value: ["human:dave", "agent://ops/a"],
    });
    expect(checkRotation(["human:dave", "two words"]).problem).toEqual({ index: 1, problem: { code: "not-participant" } });
    const ids = Array.from({ length: LIMITS.rotation + 1 }, (_, i) => `human:p${i}`);
    expect(checkRotation(ids).problem).toEqual({
      index: -1,
      problem: { code: "too-many", count: LIMITS.rotation + 1, max: LIMITS.rotation },
    });
    // The owner and the target do not count against the limit.
    expect(checkRotation([...ids.slice(1), "human:alice"], { owner: "human:alice" }).problem).toBeUndefined();
  });
});
