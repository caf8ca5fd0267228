import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { LIMITS } from "@/lib/actions/rules";
import { HandoffTemplateSchema, PolicyChoice } from "@/lib/gen/baton/v1/actions_pb";
import { HandoffTemplateStore, parseTemplate, parseTemplateId } from "./handoff-templates";

const base = {
  name: "Payments weekly rotation",
  target: "human:bob",
  scope: "payments-api primary on-call",
  reason: "weekly rotation",
  runbookMarkdown: "# Runbook\n\n1. Check the dashboards.",
  policy: PolicyChoice.LEAD_APPROVAL,
  approvers: ["human:carol"],
  ttlMs: 7_200_000,
};

function fieldOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return `${ConnectError.from(e).code === Code.InvalidArgument ? "invalid" : "other"}:${ConnectError.from(e).rawMessage}`;
  }
  return "ok";
}

describe("parseTemplate (the action contract at the edge)", () => {
  it("keeps a valid template and fills defaults", () => {
    const t = parseTemplate(create(HandoffTemplateSchema, { ...base, ttlMs: 0, policy: PolicyChoice.UNSPECIFIED, approvers: [] }));
    expect(t).toMatchObject({
      id: "",
      name: base.name,
      target: "human:bob",
      policy: PolicyChoice.DEFAULT,
      ttlMs: LIMITS.defaultTtlMs,
      approvers: [],
    });
  });
  it("refuses what the contract refuses, naming the field", () => {
    expect(fieldOf(() => parseTemplate(undefined))).toMatch(/^invalid:template:/);
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, name: "" })))).toMatch(
      /^invalid:template\.name: is required/,
    );
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, name: "x".repeat(LIMITS.templateName + 1) })))).toMatch(
      /template\.name/,
    );
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, name: "two\nlines" })))).toMatch(
      /template\.name: must be one line/,
    );
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, target: "has space" })))).toMatch(/template\.target/);
    expect(
      fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, runbookMarkdown: "x".repeat(LIMITS.runbookBytes + 1) }))),
    ).toMatch(/template\.runbook_markdown/);
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, ttlMs: 10 })))).toMatch(/template\.ttl_ms/);
    expect(
      fieldOf(() =>
        parseTemplate(create(HandoffTemplateSchema, { ...base, policy: PolicyChoice.IMPLICIT_ACCEPT, implicitAcceptTimeoutMs: 5 })),
      ),
    ).toMatch(/implicit_accept_timeout_ms/);
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, id: "nope" })))).toMatch(/template\.id/);
    expect(fieldOf(() => parseTemplateId("../etc"))).toMatch(/^invalid:id/);
  });
  it("keeps who else is on the rotation, checked by the contract (ids, count), without the target or repeats", () => {
    const t = parseTemplate(
      create(HandoffTemplateSchema, { ...base, participants: [" human:dave ", "human:bob", "", "human:dave", "human:erin"] }),
    );
    expect(t.participants).toEqual(["human:dave", "human:erin"]);
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, participants: ["human:dave", "has space"] })))).toMatch(
      /^invalid:template\.participants\[1\]: is not a participant id/,
    );
    const many = Array.from({ length: LIMITS.rotation + 1 }, (_, i) => `human:p${i}`);
    expect(fieldOf(() => parseTemplate(create(HandoffTemplateSchema, { ...base, participants: many })))).toMatch(
      new RegExp(`^invalid:template\\.participants: has ${LIMITS.rotation + 1}; at most ${LIMITS.rotation}`),
    );
    expect(parseTemplate(create(HandoffTemplateSchema, { ...base, participants: many.slice(1) })).participants).toHaveLength(
      LIMITS.rotation,
    );
  });
});

describe("HandoffTemplateStore", () => {
  it("saves per person, replaces by id or name, lists by name, deletes, and bounds the count", () => {
    let now = 1_000;
    const store = new HandoffTemplateStore(":memory:", () => now, 3);
    const a = store.save("alice", parseTemplate(create(HandoffTemplateSchema, base)));
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(parseTemplateId(a.id)).toBe(a.id);
    expect(store.list("bob")).toEqual([]);
    now = 2_000;
    // The same name again replaces it (same id).
    const again = store.save("alice", parseTemplate(create(HandoffTemplateSchema, { ...base, reason: "changed" })));
    expect(again.id).toBe(a.id);
    expect(store.list("alice")).toEqual([{ ...again, updatedMs: 2_000 }]);
    store.save("alice", parseTemplate(create(HandoffTemplateSchema, { ...base, name: "b night" })));
    const c = store.save("alice", parseTemplate(create(HandoffTemplateSchema, { ...base, name: "A day" })));
    expect(store.list("alice").map((t) => t.name)).toEqual(["A day", "b night", "Payments weekly rotation"]);
    // Full: a fourth is refused; saving over an existing one is not.
    expect(() => store.save("alice", parseTemplate(create(HandoffTemplateSchema, { ...base, name: "fourth" })))).toThrow(/most allowed/);
    // Renaming by id onto another's name replaces that other one.
    store.save("alice", { ...parseTemplate(create(HandoffTemplateSchema, { ...base, name: "b night" })), id: c.id });
    expect(store.list("alice").map((t) => t.name)).toEqual(["b night", "Payments weekly rotation"]);
    expect(store.delete("bob", a.id)).toBe(false);
    expect(store.delete("alice", a.id)).toBe(true);
    expect(store.list("alice").map((t) => t.id)).toEqual([c.id]);
    expect(() => store.save("alice", { ...parseTemplate(create(HandoffTemplateSchema, base)), id: a.id })).toThrow(/no template/);
    store.close();
  });
  it("stores the rotation (not the owner), and reads templates saved before it had one as empty", () => {
    const store = new HandoffTemplateStore(":memory:", () => 5, 3);
    const t = store.save(
      "human:alice",
      parseTemplate(create(HandoffTemplateSchema, { ...base, participants: ["human:alice", "human:dave"] })),
    );
    expect(t.participants).toEqual(["human:dave"]);
    expect(store.list("human:alice")[0]?.participants).toEqual(["human:dave"]);
    // A row written by an older console: its JSON body has no participants.
    const db = (store as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
    const { participants: _dropped, ...old } = parseTemplate(create(HandoffTemplateSchema, { ...base, name: "old" }));
    const { id: _id, name: _name, ...body } = old;
    db.prepare("INSERT INTO templates (owner, id, name, body, updated_ms) VALUES (?, ?, ?, ?, ?)").run(
      "human:alice",
      "00000000-0000-4000-8000-000000000000",
      "old",
      JSON.stringify(body),
      1,
    );
    expect(store.list("human:alice").find((x) => x.name === "old")?.participants).toEqual([]);
    store.close();
  });
});
