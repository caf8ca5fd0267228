import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  AttachContextRequestSchema,
  CommitRequestSchema,
  FieldViolationSchema,
  FileContentSchema,
  HandoffOutcome,
  OfferRequestSchema,
  PolicyChoice,
  SessionKind,
  StartSessionRequestSchema,
  TaskCommitRequestSchema,
  TaskFailRequestSchema,
  TaskOutcome,
  TaskRequestRequestSchema,
  TaskUpdateRequestSchema,
  type AttachContextRequest,
  type StartSessionRequest,
  type TaskRequestRequest,
} from "@/lib/gen/baton/v1/actions_pb";
import type { UserRecord } from "@/lib/accounts/users-file";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import {
  contentTypeOf,
  messageIdOf,
  parseAttachContext,
  parseCommit,
  parseOffer,
  parseStart,
  parseTaskCommit,
  parseTaskFail,
  parseTaskRequest,
  parseTaskUpdate,
  textOf,
} from ".";

const SID = "0b7e6f5a-3c2d-4e1f-8a9b-0c1d2e3f4a5b";
const MID = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a";
const USERS: UserRecord[] = [
  { username: "alice", displayName: "Alice Ng", role: "operator", participantId: "human:alice" },
  { username: "bob", displayName: "Bob Ito", role: "operator", participantId: "human:bob" },
  { username: "carol", displayName: "Carol Lee", role: "approver", participantId: "human:carol" },
  { username: "root", displayName: "Root", role: "admin", participantId: "human:root" },
  { username: "gone", displayName: "Gone", role: "approver", participantId: "human:gone", disabled: true },
];

/** The field a call refused, or "" if it passed. */
function fieldOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    const err = ConnectError.from(e);
    expect(err.code).toBe(Code.InvalidArgument);
    const field = err.findDetails(FieldViolationSchema)[0]?.field ?? "?";
    expect(err.rawMessage.startsWith(`${field}: `)).toBe(true);
    return field;
  }
  return "";
}

type Init<T> = Partial<Omit<T, "$typeName" | "$unknown">>;

function start(init: Init<StartSessionRequest> = {}) {
  return create(StartSessionRequestSchema, {
    messageId: MID,
    kind: SessionKind.HANDOFF,
    intent: "rotate",
    participants: ["human:bob"],
    ...init,
  });
}

describe("message ids", () => {
  it("accepts UUIDs (lowercasing them) and refuses anything else", () => {
    expect(messageIdOf(MID.toUpperCase())).toBe(MID);
    for (const bad of ["", "1", "not-a-uuid", `${MID}x`, "9f8e7d6c5b4a43928170-6f5e4d3c2b1a"]) {
      expect(fieldOf(() => messageIdOf(bad))).toBe("message_id");
    }
  });
});

describe("text fields", () => {
  it("trims, enforces bounds, refuses control characters and line breaks in single-line fields", () => {
    expect(textOf("intent", "  hi  ", { required: true, max: 5 })).toBe("hi");
    expect(fieldOf(() => textOf("intent", "   ", { required: true, max: 5 }))).toBe("intent");
    expect(fieldOf(() => textOf("intent", "toolong", { max: 5 }))).toBe("intent");
    expect(fieldOf(() => textOf("scope", "a\u0007b", { max: 50 }))).toBe("scope");
    expect(fieldOf(() => textOf("scope", "a\nb", { max: 50 }))).toBe("scope");
    expect(textOf("reason", "line 1\nline 2", { max: 50, multiline: true })).toBe("line 1\nline 2");
  });
});

describe("StartSession", () => {
  it("adds the initiator and approvers to the participants and defaults the TTL", () => {
    const s = parseStart(
      start({
        participants: ["human:alice", "human:bob", "agent://bot"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:root", "human:carol"],
      }),
      "human:alice",
      USERS,
    );
    expect(s.mode).toBe(HANDOFF_MODE);
    expect(s.participants).toEqual(["human:alice", "human:bob", "agent://bot", "human:root", "human:carol"]);
    expect(s.policy).toEqual({ kind: "approval", approvers: ["human:carol", "human:root"] });
    expect(s.ttlMs).toBe(3_600_000);
    expect(parseStart(start({ kind: SessionKind.TASK, ttlMs: 60_000 }), "human:alice", USERS)).toMatchObject({
      mode: TASK_MODE,
      ttlMs: 60_000,
      policy: { kind: "default" },
    });
  });

  it("names the field that is wrong", () => {
    const cases: [Init<StartSessionRequest>, string][] = [
      [{ kind: SessionKind.UNSPECIFIED }, "kind"],
      [{ intent: "" }, "intent"],
      [{ intent: "x".repeat(501) }, "intent"],
      [{ participants: [] }, "participants"],
      [{ participants: ["human:alice"] }, "participants"],
      [{ participants: ["human:bob", "human:bob"] }, "participants[1]"],
      [{ participants: ["has space"] }, "participants[0]"],
      [{ participants: ["human:zed"] }, "participants[0]"],
      [{ participants: ["human:gone"] }, "participants[0]"],
      [{ ttlMs: 86_400_001 }, "ttl_ms"],
      [{ policy: PolicyChoice.LEAD_APPROVAL }, "approvers"],
      [{ policy: PolicyChoice.LEAD_APPROVAL, approvers: ["human:bob"] }, "approvers[0]"],
      [{ policy: PolicyChoice.LEAD_APPROVAL, approvers: ["agent://bot"] }, "approvers[0]"],
      [{ policy: PolicyChoice.LEAD_APPROVAL, approvers: ["human:gone"] }, "approvers[0]"],
      [{ policy: PolicyChoice.LEAD_APPROVAL, approvers: ["human:carol", "human:carol"] }, "approvers[1]"],
      [{ approvers: ["human:carol"] }, "approvers"],
      [{ policy: PolicyChoice.IMPLICIT_ACCEPT, implicitAcceptTimeoutMs: 10 }, "implicit_accept_timeout_ms"],
      [{ kind: SessionKind.TASK, policy: PolicyChoice.IMPLICIT_ACCEPT, implicitAcceptTimeoutMs: 60_000 }, "policy"],
      [{ implicitAcceptTimeoutMs: 60_000 }, "implicit_accept_timeout_ms"],
      [{ frozenContextJson: "{not json" }, "frozen_context_json"],
      [{ frozenContextJson: `"${"x".repeat(70_000)}"` }, "frozen_context_json"],
      [{ contextId: "INC\n1" }, "context_id"],
      [{ messageId: "" }, "message_id"],
    ];
    for (const [init, field] of cases)
      expect(
        fieldOf(() => parseStart(start(init), "human:alice", USERS)),
        JSON.stringify(init).slice(0, 80),
      ).toBe(field);
    expect(
      parseStart(start({ policy: PolicyChoice.IMPLICIT_ACCEPT, implicitAcceptTimeoutMs: 60_000 }), "human:alice", USERS).policy,
    ).toEqual({ kind: "implicit", timeoutMs: 60_000 });
    expect(parseStart(start({ frozenContextJson: ' {"a": [1, 2]} ' }), "human:alice", USERS).frozenContextJson).toBe(' {"a": [1, 2]} ');
  });
});

describe("handoff messages", () => {
  it("checks offers, contexts and commitments", () => {
    expect(parseOffer(create(OfferRequestSchema, { sessionId: SID, messageId: MID, target: " human:bob ", scope: "pager" }))).toMatchObject(
      { target: "human:bob", scope: "pager" },
    );
    expect(fieldOf(() => parseOffer(create(OfferRequestSchema, { sessionId: "nope", messageId: MID, target: "human:bob" })))).toBe(
      "session_id",
    );
    expect(fieldOf(() => parseOffer(create(OfferRequestSchema, { sessionId: SID, messageId: MID, target: "" })))).toBe("target");

    const file = (contentType: string, data: Uint8Array) => ({
      case: "file" as const,
      value: create(FileContentSchema, { contentType, data }),
    });
    const ctx = (content: AttachContextRequest["content"]) =>
      parseAttachContext(create(AttachContextRequestSchema, { sessionId: SID, messageId: MID, content }));
    expect(ctx({ case: "markdown", value: "# Runbook" })).toMatchObject({
      contentType: "text/markdown; charset=utf-8",
      field: "content.markdown",
    });
    const link = ctx({ case: "link", value: "https://wiki.example/runbooks/payments" });
    expect(link.contentType).toBe("text/uri-list");
    expect(new TextDecoder().decode(link.data)).toBe("https://wiki.example/runbooks/payments\r\n");
    const pdf = ctx(file("Application/PDF", new Uint8Array([37, 80, 68, 70])));
    expect(pdf.contentType).toBe("application/pdf");
    expect(fieldOf(() => ctx({ case: undefined, value: undefined }))).toBe("content");
    expect(fieldOf(() => ctx({ case: "markdown", value: "  " }))).toBe("content.markdown");
    expect(fieldOf(() => ctx({ case: "link", value: "ftp://x.example/file" }))).toBe("content.link");
    expect(fieldOf(() => ctx({ case: "link", value: "https://user:pw@x.example/" }))).toBe("content.link");
    expect(fieldOf(() => ctx(file("text/plain", new Uint8Array())))).toBe("content.file.data");
    expect(fieldOf(() => ctx(file("text/plain", new Uint8Array([0xff, 0xfe]))))).toBe("content.file.data");
    expect(fieldOf(() => ctx(file("image/svg+xml", new Uint8Array([60]))))).toBe("content.file.content_type");

    expect(fieldOf(() => parseCommit(create(CommitRequestSchema, { sessionId: SID, messageId: MID })))).toBe("outcome");
    expect(parseCommit(create(CommitRequestSchema, { sessionId: SID, messageId: MID, outcome: HandoffOutcome.DECLINED }))).toMatchObject({
      positive: false,
    });
  });

  it("parses MIME types strictly", () => {
    expect(contentTypeOf("t", 'text/markdown; charset="utf-8"')).toBe('text/markdown; charset="utf-8"');
    expect(contentTypeOf("t", "application/vnd.ms-excel")).toBe("application/vnd.ms-excel");
    for (const bad of ["markdown", "text/", "text/plain;", "a/b c", "text/html; charset=utf-8", "TEXT/HTML"]) {
      expect(
        fieldOf(() => contentTypeOf("t", bad)),
        bad,
      ).toBe("t");
    }
  });
});

describe("task messages", () => {
  it("checks requests, updates, failures and commitments", () => {
    const req = (init: Init<TaskRequestRequest>) =>
      parseTaskRequest(create(TaskRequestRequestSchema, { sessionId: SID, messageId: MID, title: "Rotate certs", ...init }), 1000);
    expect(req({ inputJson: '{"hosts":[]}', deadlineUnixMs: 1_700_000_000_000n })).toMatchObject({
      inputJson: '{"hosts":[]}',
      deadlineUnixMs: 1_700_000_000_000,
    });
    expect(fieldOf(() => req({ title: "" }))).toBe("title");
    expect(fieldOf(() => req({ inputJson: "[1," }))).toBe("input_json");
    expect(fieldOf(() => req({ inputJson: JSON.stringify("x".repeat(2000)) }))).toBe("input_json");
    expect(fieldOf(() => req({ deadlineUnixMs: -1n }))).toBe("deadline_unix_ms");
    expect(fieldOf(() => req({ assignee: "a b" }))).toBe("assignee");

    const upd = (progress: number, status = "") =>
      parseTaskUpdate(create(TaskUpdateRequestSchema, { sessionId: SID, messageId: MID, progress, status }));
    expect(upd(0.25)).toMatchObject({ progress: 0.25, status: "in_progress" });
    for (const p of [-0.1, 1.01, Number.NaN, Number.POSITIVE_INFINITY]) expect(fieldOf(() => upd(p))).toBe("progress");
    expect(fieldOf(() => upd(0.5, "half way"))).toBe("status");

    expect(fieldOf(() => parseTaskFail(create(TaskFailRequestSchema, { sessionId: SID, messageId: MID })))).toBe("error_code");
    expect(fieldOf(() => parseTaskFail(create(TaskFailRequestSchema, { sessionId: SID, messageId: MID, errorCode: "bad code" })))).toBe(
      "error_code",
    );
    expect(
      parseTaskFail(create(TaskFailRequestSchema, { sessionId: SID, messageId: MID, errorCode: "TIMEOUT", retryable: true })),
    ).toMatchObject({ errorCode: "TIMEOUT", retryable: true });

    expect(fieldOf(() => parseTaskCommit(create(TaskCommitRequestSchema, { sessionId: SID, messageId: MID })))).toBe("outcome");
    expect(parseTaskCommit(create(TaskCommitRequestSchema, { sessionId: SID, messageId: MID, outcome: TaskOutcome.FAILED }))).toMatchObject(
      { positive: false },
    );
  });
});
