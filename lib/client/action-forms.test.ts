import { describe, expect, it } from "vitest";
import { HandoffOutcome, TaskOutcome } from "@/lib/gen/baton/v1/actions_pb";
import {
  ENVELOPE_OVERHEAD_BYTES,
  contentTypeForFile,
  formFieldOf,
  validateAttach,
  validateCommit,
  validateOffer,
  validateReason,
  validateTaskComplete,
  validateTaskCommit,
  validateTaskFail,
  validateTaskRequest,
  validateTaskUpdate,
} from "@/lib/client/action-forms";

describe("handoff forms", () => {
  it("offer", () => {
    expect(validateOffer({ target: " human:bob ", scope: "pager", reason: "rotation\nweekly" })).toEqual({
      ok: true,
      value: { target: "human:bob", scope: "pager", reason: "rotation\nweekly" },
    });
    const r = validateOffer({ target: "", scope: "", reason: "x".repeat(1001) });
    expect(!r.ok && r.errors).toEqual({ target: "Choose who receives the offer.", reason: "Use at most 1,000 characters (now 1,001)." });
  });

  it("attach: markdown, files within the payload limit, links", () => {
    const limit = 10_000;
    expect(validateAttach({ kind: "markdown", markdown: "# Runbook" }, limit)).toEqual({
      ok: true,
      value: { case: "markdown", value: "# Runbook" },
    });
    expect(validateAttach({ kind: "markdown", markdown: "   " }, limit)).toEqual({
      ok: false,
      errors: { markdown: "Paste the runbook's Markdown." },
    });
    const big = validateAttach({ kind: "markdown", markdown: "x".repeat(limit) }, limit);
    expect(!big.ok && big.errors.markdown).toMatch(/fit in one message/);
    const file = { name: "runbook.md", type: "", bytes: new TextEncoder().encode("# Hi") };
    expect(validateAttach({ kind: "file", file }, limit)).toEqual({
      ok: true,
      value: { case: "file", value: { contentType: "text/markdown; charset=utf-8", data: file.bytes } },
    });
    const tooBig = validateAttach(
      {
        kind: "file",
        file: { name: "dump.bin", type: "application/octet-stream", bytes: new Uint8Array(limit - ENVELOPE_OVERHEAD_BYTES + 1) },
      },
      limit,
    );
    expect(!tooBig.ok && tooBig.errors.file).toMatch(/dump.bin is .* fit in one message/);
    const html = validateAttach({ kind: "file", file: { name: "page.html", type: "text/html", bytes: new Uint8Array([60]) } }, limit);
    expect(!html.ok && html.errors.file).toMatch(/text\/html files are refused/);
    const notUtf8 = validateAttach(
      { kind: "file", file: { name: "notes.txt", type: "text/plain", bytes: new Uint8Array([0xff, 0xfe]) } },
      limit,
    );
    expect(!notUtf8.ok && notUtf8.errors.file).toMatch(/not UTF-8/);
    expect(validateAttach({ kind: "file", file: null }, limit)).toEqual({ ok: false, errors: { file: "Choose a file." } });
    expect(validateAttach({ kind: "link", link: " https://wiki.example.com/runbook " }, limit)).toEqual({
      ok: true,
      value: { case: "link", value: "https://wiki.example.com/runbook" },
    });
    for (const bad of ["javascript:alert(1)", "not a url", "https://user:pw@example.com/"]) {
      expect(validateAttach({ kind: "link", link: bad }, limit).ok).toBe(false);
    }
  });

  it("content types for uploads", () => {
    expect(contentTypeForFile("notes.MD", "")).toBe("text/markdown; charset=utf-8");
    expect(contentTypeForFile("notes.md", "text/x-markdown")).toBe("text/markdown; charset=utf-8");
    expect(contentTypeForFile("report.pdf", "application/pdf")).toBe("application/pdf");
    expect(contentTypeForFile("log", "")).toBe("application/octet-stream");
    expect(contentTypeForFile("a.csv", "text/csv")).toBe("text/csv; charset=utf-8");
  });

  it("reasons and commits", () => {
    expect(validateReason("", true)).toEqual({ ok: false, errors: { reason: "Enter a reason." } });
    expect(validateReason("", false)).toEqual({ ok: true, value: { reason: "" } });
    expect(validateCommit({ outcome: "accepted", authorityScope: "pager", reason: "Dave takes over" })).toEqual({
      ok: true,
      value: { outcome: HandoffOutcome.ACCEPTED, authorityScope: "pager", reason: "Dave takes over" },
    });
    expect(validateCommit({ outcome: "declined", authorityScope: "", reason: "" }).ok).toBe(true);
  });
});

describe("task forms", () => {
  const NOW = Date.parse("2026-03-01T09:00:00Z");
  it("request", () => {
    const r = validateTaskRequest(
      { title: "Export Q1", instructions: "", assignee: "", inputJson: '{"q":1}', deadline: "2026-03-02T09:00" },
      10_000,
      NOW,
    );
    expect(r.ok && r.value).toMatchObject({ title: "Export Q1", assignee: "", inputJson: '{"q":1}' });
    expect(r.ok && r.value.deadlineUnixMs).toBeGreaterThan(BigInt(NOW));
    const bad = validateTaskRequest(
      { title: "", instructions: "", assignee: "a b", inputJson: "[", deadline: "2020-01-01T00:00" },
      10_000,
      NOW,
    );
    expect(!bad.ok && Object.keys(bad.errors).sort()).toEqual(["assignee", "deadline", "inputJson", "title"]);
  });

  it("update, complete, fail, commit", () => {
    expect(validateTaskUpdate({ progress: "45", status: "", message: "half" })).toEqual({
      ok: true,
      value: { progress: 0.45, status: "", message: "half" },
    });
    expect(validateTaskUpdate({ progress: "101", status: "in progress", message: "" })).toEqual({
      ok: false,
      errors: { progress: "Enter a progress from 0 to 100 %.", status: "Use one word: letters, digits, _ . or -, e.g. in_progress." },
    });
    const done = validateTaskComplete({ output: ' {"rows": 3} ', summary: "exported" }, 10_000);
    expect(done.ok && new TextDecoder().decode(done.value.output)).toBe('{"rows": 3}');
    expect(validateTaskComplete({ output: "", summary: "" }, 10_000)).toEqual({ ok: false, errors: { summary: "Enter a summary." } });
    expect(validateTaskFail({ errorCode: "TIMEOUT", reason: "db slow", retryable: true })).toEqual({
      ok: true,
      value: { errorCode: "TIMEOUT", reason: "db slow", retryable: true },
    });
    expect(validateTaskFail({ errorCode: "no spaces allowed", reason: "", retryable: false }).ok).toBe(false);
    expect(validateTaskCommit({ outcome: "failed", authorityScope: "", reason: "" })).toEqual({
      ok: true,
      value: { outcome: TaskOutcome.FAILED, authorityScope: "", reason: "" },
    });
  });
});

it("maps server field paths to form fields", () => {
  expect(formFieldOf("participants[2]")).toBe("participants");
  expect(formFieldOf("content.markdown")).toBe("markdown");
  expect(formFieldOf("frozen_context_json")).toBe("frozenContext");
  expect(formFieldOf("target")).toBe("target");
});
