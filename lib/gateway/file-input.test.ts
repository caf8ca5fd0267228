import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  ActOnFileHandoffRequestSchema,
  FileHandoffAction,
  GetFileHandoffRequestSchema,
  ListFileHandoffsRequestSchema,
  OfferFileHandoffRequestSchema,
} from "@/lib/gen/baton/v1/files_pb";
import { contextOf, parseFileAct, parseFileOffer, parseGet, parseList, taskIdOf } from "./file-input";

const HASH = "a".repeat(64);
const KEY = "0123456789ab";

function field(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    const ce = ConnectError.from(e);
    expect(ce.code).toBe(Code.InvalidArgument);
    return ce.rawMessage.split(":")[0] ?? "";
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("file-input", () => {
  it("task ids: file name stems only", () => {
    expect(taskIdOf(" 3f2a ")).toBe("3f2a");
    for (const bad of ["", "../x", "a/b", "a\\b", ".hidden", "a\u0000b", "x".repeat(201)])
      expect(field(() => taskIdOf(bad))).toBe("task_id");
  });

  it("context: bounded keys and values", () => {
    expect(contextOf({ ticket: "OPS-1", "a.b:c-d": "x" })).toEqual({ ticket: "OPS-1", "a.b:c-d": "x" });
    expect(field(() => contextOf({ "bad key": "x" }))).toBe("context");
    expect(field(() => contextOf({ __proto__x: "ok", "-x": "y" }))).toBe("context");
    expect(field(() => contextOf({ k: "x".repeat(2001) }))).toBe("context");
    expect(field(() => contextOf({ k: "bell\u0007" }))).toBe("context");
    expect(field(() => contextOf(Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"]))))).toBe("context");
    expect(Object.getPrototypeOf(contextOf({ a: "b" }))).toBeNull();
  });

  it("list: status, directory key, limits, cursor", () => {
    expect(parseList(create(ListFileHandoffsRequestSchema, {}))).toMatchObject({ status: "", dirKey: "", limit: 50, cursor: "" });
    expect(parseList(create(ListFileHandoffsRequestSchema, { status: "failed", dirKey: KEY, limit: 10, cursor: "12.3" }))).toMatchObject({
      status: "failed",
      dirKey: KEY,
      limit: 10,
      cursor: "12.3",
    });
    expect(field(() => parseList(create(ListFileHandoffsRequestSchema, { status: "done" })))).toBe("status");
    expect(field(() => parseList(create(ListFileHandoffsRequestSchema, { dirKey: "/etc" })))).toBe("dir_key");
    expect(field(() => parseList(create(ListFileHandoffsRequestSchema, { limit: 201 })))).toBe("limit");
    expect(field(() => parseList(create(ListFileHandoffsRequestSchema, { cursor: "1.2; DROP" })))).toBe("cursor");
    expect(field(() => parseList(create(ListFileHandoffsRequestSchema, { toAgent: "has space" })))).toBe("to_agent");
  });

  it("get: a directory key and a task id", () => {
    expect(parseGet(create(GetFileHandoffRequestSchema, { dirKey: KEY, taskId: "t1" }))).toEqual({
      dirKey: KEY,
      taskId: "t1",
      afterSeq: 0,
      limit: 200,
    });
    expect(field(() => parseGet(create(GetFileHandoffRequestSchema, { taskId: "t1" })))).toBe("dir_key");
    expect(field(() => parseGet(create(GetFileHandoffRequestSchema, { dirKey: KEY, taskId: "t", limit: 1001 })))).toBe("limit");
  });

  it("offer: description, to_agent, context, message id", () => {
    const ok = parseFileOffer(
      create(OfferFileHandoffRequestSchema, {
        dirKey: KEY,
        description: " Rotate\nthe certs ",
        context: { t: "1" },
        messageId: "3F0C6A1E-1B2C-4D5E-8F90-A1B2C3D4E5F6",
      }),
    );
    expect(ok).toMatchObject({ description: "Rotate\nthe certs", toAgent: "", messageId: "3f0c6a1e-1b2c-4d5e-8f90-a1b2c3d4e5f6" });
    const base = { dirKey: KEY, description: "x", messageId: "3f0c6a1e-1b2c-4d5e-8f90-a1b2c3d4e5f6" };
    expect(field(() => parseFileOffer(create(OfferFileHandoffRequestSchema, { ...base, description: "  " })))).toBe("description");
    expect(field(() => parseFileOffer(create(OfferFileHandoffRequestSchema, { ...base, description: "x".repeat(10_001) })))).toBe(
      "description",
    );
    expect(field(() => parseFileOffer(create(OfferFileHandoffRequestSchema, { ...base, messageId: "" })))).toBe("message_id");
    expect(field(() => parseFileOffer(create(OfferFileHandoffRequestSchema, { ...base, toAgent: "a b" })))).toBe("to_agent");
  });

  it("act: an action, the hash seen, and only the fields that action takes", () => {
    const base = { dirKey: KEY, taskId: "t1", expectHash: HASH };
    expect(
      parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base, action: FileHandoffAction.COMPLETE, context: { result: "ok" } })),
    ).toMatchObject({ kind: "complete", context: { result: "ok" } });
    expect(
      parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base, action: FileHandoffAction.REOFFER, toAgent: "agent://w" })),
    ).toMatchObject({ kind: "reoffer", toAgent: "agent://w" });
    expect(field(() => parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base })))).toBe("action");
    expect(
      field(() => parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base, action: FileHandoffAction.ACCEPT, expectHash: "" }))),
    ).toBe("expect_hash");
    expect(
      field(() =>
        parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base, action: FileHandoffAction.ACCEPT, expectHash: "stat:1:2" })),
      ),
    ).toBe("expect_hash");
    expect(
      field(() => parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base, action: FileHandoffAction.ACCEPT, context: { a: "b" } }))),
    ).toBe("context");
    expect(
      field(() => parseFileAct(create(ActOnFileHandoffRequestSchema, { ...base, action: FileHandoffAction.ACCEPT, toAgent: "agent://w" }))),
    ).toBe("to_agent");
  });
});
