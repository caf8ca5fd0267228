// The catalog query parser (query.ts): the browser's list vocabulary accepted, anything else refused, pages capped.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionListQuerySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import { parseListQuery, parsePage } from "./query";

describe("parseListQuery / parsePage", () => {
  const bad = (init: Record<string, unknown>) => {
    try {
      parseListQuery(create(SessionListQuerySchema, init));
    } catch (e) {
      return e instanceof ConnectError ? `${Code[e.code]}: ${e.rawMessage}` : String(e);
    }
    return "accepted";
  };

  it("accepts the browser's vocabulary", () => {
    expect(parseListQuery(undefined)).toEqual({ participant: "", text: "", sort: "activity", ascending: false });
    expect(
      parseListQuery(
        create(SessionListQuerySchema, {
          mode: "task",
          state: "expired",
          phase: "Failed",
          participant: " Bob ",
          text: "Pager",
          sort: "ttl",
          ascending: true,
        }),
      ),
    ).toEqual({
      mode: TASK_MODE,
      state: SessionState.EXPIRED,
      phase: "Failed",
      participant: "bob",
      text: "pager",
      sort: "ttl",
      ascending: true,
    });
    expect(parseListQuery(create(SessionListQuerySchema, { mode: "file" })).mode).toBe("v0.1.file");
  });

  it("refuses anything else with INVALID_ARGUMENT naming the field", () => {
    expect(bad({ mode: "chat" })).toMatch(/^InvalidArgument: query.mode "chat" is not one of "", "handoff", "task", "file"/);
    expect(bad({ mode: "__proto__" })).toMatch(/^InvalidArgument: query.mode/);
    expect(bad({ state: "OPEN" })).toMatch(/^InvalidArgument: query.state/);
    expect(bad({ phase: "Done" })).toMatch(/^InvalidArgument: query.phase/);
    expect(bad({ sort: "n; DROP" })).toMatch(/^InvalidArgument: query.sort/);
    expect(bad({ text: "a\u0000b" })).toMatch(/^InvalidArgument: query.text must not contain control characters/);
    expect(bad({ participant: "x".repeat(201) })).toMatch(/^InvalidArgument: query.participant is longer than 200/);
  });

  it("caps the page", () => {
    expect(parsePage(0, 0)).toEqual({ offset: 0, limit: 100 });
    expect(parsePage(40, 10_000)).toEqual({ offset: 40, limit: 500 });
  });
});
