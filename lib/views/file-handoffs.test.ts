import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  fileBadge,
  fileHref,
  fileOutcomeOfError,
  parseFileFilter,
  parseFileParams,
  serializeFileFilter,
  stepSentence,
} from "@/lib/views/file-handoffs";

describe("file handoffs in the browser", () => {
  it("pills: removed and invalid before the status", () => {
    expect(fileBadge({ present: true, valid: true, status: "offered" }).label).toBe("Offered");
    expect(fileBadge({ present: true, valid: false, status: "offered" }).label).toBe("Invalid");
    expect(fileBadge({ present: false, valid: true, status: "offered" }).label).toBe("Removed");
  });

  it("timeline sentences say how the status moved", () => {
    const base = { kind: "snapshot", valid: true, problem: "" };
    expect(stepSentence({ ...base, status: "offered", previousStatus: "", step: "first" })).toBe("First seen as offered.");
    expect(stepSentence({ ...base, status: "accepted", previousStatus: "offered", step: "legal" })).toBe("Offered → accepted.");
    expect(stepSentence({ ...base, status: "completed", previousStatus: "offered", step: "gap" })).toMatch(/not observed/);
    expect(
      stepSentence({
        ...base,
        valid: false,
        status: "offered",
        previousStatus: "completed",
        step: "illegal",
        problem: "completed is final",
      }),
    ).toMatch(/not allowed/);
    expect(stepSentence({ ...base, valid: false, status: "", previousStatus: "", step: "", problem: "bad JSON" })).toBe(
      "Not a valid v0.1 handoff: bad JSON.",
    );
    expect(stepSentence({ ...base, kind: "removed", status: "", previousStatus: "", step: "" })).toBe("The file was removed.");
  });

  it("filters round-trip through the URL and ignore junk", () => {
    const f = parseFileFilter(new URLSearchParams("status=accepted&dir=0123456789ab"));
    expect(f).toEqual({ status: "accepted", dir: "0123456789ab" });
    expect(serializeFileFilter(f)).toBe("?status=accepted&dir=0123456789ab");
    expect(parseFileFilter(new URLSearchParams("status=<script>&dir=../x"))).toEqual({ status: "", dir: "" });
    expect(serializeFileFilter({ status: "", dir: "" })).toBe("");
  });

  it("deep links: encoded, and route params are checked", () => {
    expect(fileHref("0123456789ab", "a b")).toBe("/files/0123456789ab/a%20b");
    expect(parseFileParams("0123456789ab", "a%20b")).toEqual({ dirKey: "0123456789ab", taskId: "a b" });
    expect(parseFileParams("0123456789ab", "..%2Fetc")).toBeUndefined();
    expect(parseFileParams("nothex", "x")).toBeUndefined();
    expect(parseFileParams("0123456789ab", "%E0%A4%A")).toBeUndefined();
  });

  it("a lost race is a conflict to reload, not a retry", () => {
    const lost = new ConnectError("Someone else changed this handoff", Code.Aborted, { "x-baton-file": "conflict" });
    expect(fileOutcomeOfError(lost)).toEqual({ kind: "conflict", message: "Someone else changed this handoff", foreign: false });
    const foreign = new ConnectError("Another program", Code.Aborted, { "x-baton-file": "foreign-writer" });
    expect(fileOutcomeOfError(foreign)).toMatchObject({ kind: "conflict", foreign: true });
    expect(fileOutcomeOfError(new ConnectError("no", Code.PermissionDenied, { "x-baton-deny": "role" }))).toMatchObject({ kind: "denied" });
  });
});
