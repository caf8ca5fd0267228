import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ActionResultSchema, FieldViolationSchema } from "@/lib/gen/baton/v1/actions_pb";
import {
  attemptFor,
  fingerprintOf,
  isCsrfRefusal,
  isDefinitive,
  newMessageId,
  outcomeOfError,
  outcomeOfResult,
  outcomeSentence,
  settle,
} from "@/lib/views/action-attempt";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("attempts and message ids", () => {
  let n = 0;
  const ids = () => `id-${++n}`;

  it("reuses the message_id while the same attempt has no definitive answer (retry, double click)", () => {
    const first = attemptFor(undefined, "offer:bob", ids);
    expect(attemptFor(first, "offer:bob", ids)).toBe(first);
    const afterNetworkError = settle(first, { kind: "retryable", message: "No connection" });
    expect(attemptFor(afterNetworkError, "offer:bob", ids).messageId).toBe(first.messageId);
  });

  it("makes a new one after a definitive answer or a changed form", () => {
    const first = attemptFor(undefined, "offer:bob", ids);
    expect(attemptFor(first, "offer:dave", ids).messageId).not.toBe(first.messageId);
    const refused = settle(first, { kind: "rejected", code: "FORBIDDEN", explanation: "x", detail: "" });
    expect(attemptFor(refused, "offer:bob", ids).messageId).not.toBe(first.messageId);
    const done = settle(first, { kind: "ok", duplicate: false, result: create(ActionResultSchema, { ok: true }) });
    expect(attemptFor(done, "offer:bob", ids).messageId).not.toBe(first.messageId);
  });

  it("fingerprints fields stably: key order, ignored message ids, bytes by content", () => {
    expect(fingerprintOf({ b: 1, a: "x", messageId: "m1" })).toBe(fingerprintOf({ a: "x", b: 1, messageId: "m2" }));
    expect(fingerprintOf({ data: new Uint8Array([1, 2, 3]) })).toBe(fingerprintOf({ data: new Uint8Array([1, 2, 3]) }));
    expect(fingerprintOf({ data: new Uint8Array([1, 2, 3]) })).not.toBe(fingerprintOf({ data: new Uint8Array([1, 2, 4]) }));
    expect(fingerprintOf({ deadline: 5n, list: ["a", undefined] })).toBe('{"deadline":5n,"list":["a",undefined]}');
  });

  it("makes UUID v4 message ids", () => {
    const a = newMessageId();
    expect(a).toMatch(UUID);
    expect(newMessageId()).not.toBe(a);
  });
});

describe("outcomes", () => {
  it("reads the runtime's verdict from an ActionResult", () => {
    const ok = outcomeOfResult(create(ActionResultSchema, { ok: true, duplicate: true }));
    expect(ok).toMatchObject({ kind: "ok", duplicate: true });
    expect(outcomeSentence(ok, "Offer sent to Bob Ito")).toBe(
      "Offer sent to Bob Ito (it had already gone through; nothing was sent twice).",
    );
    const refused = outcomeOfResult(
      create(ActionResultSchema, {
        ok: false,
        code: "FORBIDDEN",
        explanation: "The sender may not do this.",
        message: "commitment authority",
      }),
    );
    expect(refused).toEqual({
      kind: "rejected",
      code: "FORBIDDEN",
      explanation: "The sender may not do this.",
      detail: "commitment authority",
    });
    expect(outcomeSentence(refused, "x")).toBe("The runtime refused it: FORBIDDEN. The sender may not do this.");
  });

  it("classifies refusals before sending", () => {
    const denied = outcomeOfError(
      new ConnectError("Waiting for Bob Ito to respond to the offer.", Code.PermissionDenied, { "x-baton-deny": "state" }),
    );
    expect(denied).toEqual({ kind: "denied", reason: "Waiting for Bob Ito to respond to the offer.", denyCode: "state" });
    expect(isCsrfRefusal(denied)).toBe(false);
    expect(
      isCsrfRefusal(outcomeOfError(new ConnectError("Request refused (CSRF check)", Code.PermissionDenied, { "x-baton-deny": "csrf" }))),
    ).toBe(true);
    const invalid = outcomeOfError(
      new ConnectError("target: is required", Code.InvalidArgument, undefined, [
        { desc: FieldViolationSchema, value: { field: "target", description: "is required" } },
      ]),
    );
    expect(invalid).toEqual({ kind: "invalid", field: "target", description: "is required" });
    expect(outcomeSentence(invalid, "x")).toBe("Check target: is required");
    expect(outcomeOfError(new ConnectError("not signed in", Code.Unauthenticated)).kind).toBe("signed-out");
    expect(outcomeOfError(new ConnectError("no runtime token", Code.FailedPrecondition)).kind).toBe("precondition");
    expect(outcomeOfError(new ConnectError("no such session", Code.NotFound)).kind).toBe("not-found");
  });

  it("treats network trouble and unavailability as retryable with the same id", () => {
    for (const e of [
      new TypeError("Failed to fetch"),
      new ConnectError("runtime down", Code.Unavailable),
      new ConnectError("slow", Code.DeadlineExceeded),
    ]) {
      const o = outcomeOfError(e);
      expect(o.kind).toBe("retryable");
      expect(isDefinitive(o)).toBe(false);
      expect(outcomeSentence(o, "x")).toMatch(/it will not be sent twice/);
    }
    expect(isDefinitive(outcomeOfError(new ConnectError("no", Code.PermissionDenied)))).toBe(true);
  });
});
