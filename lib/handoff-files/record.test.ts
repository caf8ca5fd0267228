// The v0.1 record: the shipped JSON Schema (checked as a schema by ajv),
// tolerant reading (null/missing optional fields, unknown fields, any field
// order) and writing that keeps unknown fields where they were.
import fs from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { checkDocument, HANDOFF_SCHEMA, isoToMs, parseHandoffBytes, serializeDocument, toDocument, type HandoffRecord } from "./record";

const ID = "3f2a9c1e-6b7d-4e2f-9a8b-1c2d3e4f5a6b";
const base = {
  task_id: ID,
  from_agent: "agent://planner",
  to_agent: "",
  status: "offered",
  description: "Rotate the TLS certificates",
  context: { ticket: "OPS-12" },
  created_at: "2026-11-20T10:00:00Z",
  updated_at: "2026-11-20T10:00:00Z",
};
const bytes = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));

describe("v0.1 JSON Schema", () => {
  it("is a valid draft 2020-12 schema and is the file shipped next to the code", () => {
    const ajv = new Ajv2020({ strict: true });
    expect(ajv.validateSchema(HANDOFF_SCHEMA)).toBe(true);
    const shipped = JSON.parse(fs.readFileSync(path.join(__dirname, "handoff-v0.1.schema.json"), "utf8"));
    expect(shipped).toEqual(HANDOFF_SCHEMA);
    expect(shipped.required).toEqual(["task_id", "from_agent", "status", "description", "created_at", "updated_at"]);
    expect(Object.keys(shipped.properties)).toHaveLength(8);
  });

  it("accepts the reference shapes: null or missing to_agent and context, times with or without an offset", () => {
    const docs: Record<string, unknown>[] = [
      base,
      { ...base, to_agent: null, context: null },
      (({ to_agent: _t, context: _c, ...rest }) => rest)(base),
      { ...base, created_at: "2026-11-20T10:00:00.123456", updated_at: "2026-11-20T10:00:00+02:00" },
      { ...base, created_at: "2026-11-20 10:00:00.5Z" },
    ];
    for (const doc of docs) {
      const r = checkDocument(doc);
      expect(r.ok, JSON.stringify(doc)).toBe(true);
      if (r.ok) {
        expect(r.record.to_agent).toBe(typeof doc.to_agent === "string" ? doc.to_agent : "");
        expect(r.record.context).toEqual(doc.context ?? {});
      }
    }
  });

  it("names what is wrong: missing fields, unknown status, wrong types, unusable task ids, impossible dates", () => {
    const cases: [unknown, string][] = [
      [{ ...base, from_agent: undefined }, 'missing required field "from_agent"'],
      [{ ...base, status: "done" }, '"status" must be one of offered, accepted, completed, failed, rejected'],
      [{ ...base, description: 7 }, '"description" must be string'],
      [{ ...base, context: [] }, '"context" must be object or null'],
      [{ ...base, task_id: "../etc/passwd" }, '"task_id" cannot be used as a file name'],
      [{ ...base, task_id: ".hidden" }, '"task_id" cannot be used as a file name'],
      [{ ...base, from_agent: "   " }, '"from_agent" must not be blank'],
      [{ ...base, created_at: "yesterday" }, '"created_at" is not an ISO 8601 date and time'],
      [{ ...base, updated_at: "2026-02-30T10:00:00Z" }, '"updated_at" is not a real date and time'],
      [[base], "the file must hold a JSON object"],
    ];
    for (const [doc, message] of cases) {
      const r = checkDocument(JSON.parse(JSON.stringify(doc)));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.problems.map((p) => p.message).join("; ")).toContain(message);
    }
  });
});

describe("parsing file bytes", () => {
  it("reports truncated JSON, empty files, non-UTF-8 bytes and a name that does not match the task_id", () => {
    const text = JSON.stringify(base);
    const bad = (b: Uint8Array, name = `${ID}.json`) => {
      const r = parseHandoffBytes(b, name);
      expect(r.ok).toBe(false);
      return r.ok ? "" : r.problems.map((p) => `${p.code}: ${p.message}`).join("; ");
    };
    expect(bad(bytes(text.slice(0, 40)))).toMatch(/^not-json: not valid JSON/);
    expect(bad(new Uint8Array())).toBe("not-json: the file is empty");
    expect(bad(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).toBe("not-utf8: the file is not UTF-8 text");
    expect(bad(bytes(base), "other.json")).toBe(
      `name-mismatch: the file name other.json does not match its task_id "${ID}" (expected ${ID}.json)`,
    );
    expect(parseHandoffBytes(bytes(`\ufeff${text}`), `${ID}.json`).ok).toBe(true);
  });

  it("reads fields in any order and keeps unknown ones", () => {
    const { task_id, from_agent, description, created_at, updated_at, status } = base;
    const reordered = { updated_at, extra: { nested: [1, 2] }, status, description, created_at, from_agent, task_id, priority: "high" };
    const r = parseHandoffBytes(bytes(reordered), `${ID}.json`);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.record.description).toBe(base.description);
      expect(r.document.priority).toBe("high");
      expect(r.document.extra).toEqual({ nested: [1, 2] });
    }
  });
});

describe("writing documents", () => {
  it("changes the eight fields in place, keeps unknown fields and their order, appends missing fields", () => {
    const original = {
      priority: "high",
      status: "offered",
      task_id: ID,
      from_agent: "a",
      description: "d",
      created_at: base.created_at,
      updated_at: base.updated_at,
      z_last: true,
    };
    const checked = checkDocument(original);
    if (!checked.ok) throw new Error("expected valid");
    const next: HandoffRecord = { ...checked.record, status: "accepted", to_agent: "bob", updated_at: "2026-11-20T11:00:00.000Z" };
    const doc = toDocument(next, checked.document);
    expect(Object.keys(doc)).toEqual([
      "priority",
      "status",
      "task_id",
      "from_agent",
      "description",
      "created_at",
      "updated_at",
      "z_last",
      "to_agent",
      "context",
    ]);
    expect(doc).toMatchObject({ priority: "high", status: "accepted", to_agent: "bob", z_last: true, context: {} });
    expect(checkDocument(JSON.parse(serializeDocument(doc))).ok).toBe(true);
  });

  it("keeps a __proto__ field as a plain field", () => {
    const parsed = JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(base).slice(1)}`);
    const checked = checkDocument(parsed);
    if (!checked.ok) throw new Error("expected valid");
    const text = serializeDocument(toDocument(checked.record, checked.document));
    expect(text).toContain('"__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("converts ISO 8601 times, reading a time without an offset as UTC", () => {
    expect(isoToMs("2026-11-20T10:00:00Z")).toBe(Date.UTC(2026, 10, 20, 10));
    expect(isoToMs("2026-11-20T10:00:00.250")).toBe(Date.UTC(2026, 10, 20, 10, 0, 0, 250));
    expect(isoToMs("2026-11-20T12:00:00+0200")).toBe(Date.UTC(2026, 10, 20, 10));
    expect(isoToMs("nonsense")).toBeUndefined();
  });
});
