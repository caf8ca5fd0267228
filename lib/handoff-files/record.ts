// The v0.1 handoff record: its eight fields, validation against the shipped
// JSON Schema (handoff-v0.1.schema.json, checked by ajv), tolerant parsing of
// files from other writers, and serialisation that keeps unknown fields and
// the original field order. Pure: no file system access.

import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import schema from "./handoff-v0.1.schema.json";

export const HANDOFF_STATUSES = ["offered", "accepted", "completed", "failed", "rejected"] as const;
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];

/** A JSON value as JSON.parse returns it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** The eight v0.1 fields, as read from a valid file. */
export interface HandoffRecord {
  task_id: string;
  from_agent: string;
  /** "" when the file has it empty, null or missing (anyone may take it). */
  to_agent: string;
  status: HandoffStatus;
  description: string;
  /** {} when the file has it null or missing. */
  context: JsonObject;
  created_at: string;
  updated_at: string;
}

/** The eight fields in the order Baton writes them in new files. */
export const FIELD_ORDER = ["task_id", "from_agent", "to_agent", "status", "description", "context", "created_at", "updated_at"] as const;

export function isHandoffStatus(value: unknown): value is HandoffStatus {
  return typeof value === "string" && (HANDOFF_STATUSES as readonly string[]).includes(value);
}

/** The JSON Schema Baton ships and validates against (draft 2020-12). */
export const HANDOFF_SCHEMA: Readonly<Record<string, unknown>> = schema;

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validateSchema = ajv.compile(schema);

/** One reason a file or record is not a valid v0.1 handoff. */
export interface Problem {
  code: ProblemCode;
  /** A plain sentence, e.g. `missing required field "from_agent"`. */
  message: string;
}

export type ProblemCode =
  | "missing" // the file disappeared while it was read
  | "not-regular-file"
  | "symlink-outside"
  | "symlink-dangling"
  | "too-large"
  | "unreadable"
  | "not-utf8"
  | "not-json"
  | "schema"
  | "bad-timestamp"
  | "name-mismatch"
  | "illegal-transition";

function describeAjvError(e: ErrorObject): string {
  const field = e.instancePath === "" ? "" : e.instancePath.slice(1).split("/")[0];
  switch (e.keyword) {
    case "required":
      return `missing required field "${String((e.params as { missingProperty: string }).missingProperty)}"`;
    case "enum":
      return `"${field}" must be one of ${HANDOFF_STATUSES.join(", ")}`;
    case "type":
      return field
        ? `"${field}" must be ${String((e.params as { type: string | string[] }).type).replace(",", " or ")}`
        : "the file must hold a JSON object";
    case "pattern":
      if (field === "created_at" || field === "updated_at") return `"${field}" is not an ISO 8601 date and time`;
      if (field === "task_id") return `"task_id" cannot be used as a file name (no "/", "\\", control characters or leading ".")`;
      return `"${field}" must not be blank`;
    case "minLength":
      return `"${field}" must not be empty`;
    case "maxLength":
      return `"${field}" is longer than ${String((e.params as { limit: number }).limit)} characters`;
    default:
      return `${field ? `"${field}" ` : ""}${e.message ?? "is invalid"}`;
  }
}

const ISO_PARTS = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2}))?/;

/** Whether an ISO 8601 text that passed the schema pattern names a real date and time. */
export function isRealDateTime(text: string): boolean {
  const m = ISO_PARTS.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1).map((p) => (p === undefined ? 0 : Number(p))) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 60) return false;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= daysInMonth;
}

/** Milliseconds since the epoch of an ISO 8601 text (no offset: read as UTC), or undefined. */
export function isoToMs(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d{1,9}))?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/.exec(text);
  if (!m) return undefined;
  const frac = m[3] ? `.${m[3].slice(0, 3).padEnd(3, "0")}` : "";
  let zone = m[4] ?? "Z";
  if (/^[+-]\d{2}$/.test(zone)) zone += ":00";
  else if (/^[+-]\d{4}$/.test(zone)) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${m[1]}T${m[2]}${frac}${zone.toUpperCase()}`);
  return Number.isNaN(ms) ? undefined : ms;
}

export type RecordCheck =
  { ok: true; record: HandoffRecord; document: JsonObject } | { ok: false; problems: Problem[]; document?: JsonObject };

/**
 * Check a parsed JSON value against the v0.1 schema (and that its times are
 * real dates). On success returns the eight fields, normalised (`to_agent`
 * "" and `context` {} when null or missing), and the whole document with
 * every unknown field as it was.
 */
export function checkDocument(value: unknown): RecordCheck {
  if (!validateSchema(value)) {
    const problems = dedupe((validateSchema.errors ?? []).map((e) => ({ code: "schema" as const, message: describeAjvError(e) })));
    return isObject(value) ? { ok: false, problems, document: value } : { ok: false, problems };
  }
  const doc = value as JsonObject;
  const problems: Problem[] = [];
  for (const field of ["created_at", "updated_at"] as const) {
    if (!isRealDateTime(doc[field] as string))
      problems.push({ code: "bad-timestamp", message: `"${field}" is not a real date and time: ${String(doc[field])}` });
  }
  if (problems.length) return { ok: false, problems, document: doc };
  const to = doc.to_agent;
  const ctx = doc.context;
  return {
    ok: true,
    document: doc,
    record: {
      task_id: doc.task_id as string,
      from_agent: doc.from_agent as string,
      to_agent: typeof to === "string" ? to : "",
      status: doc.status as HandoffStatus,
      description: doc.description as string,
      context: isObject(ctx) ? ctx : {},
      created_at: doc.created_at as string,
      updated_at: doc.updated_at as string,
    },
  };
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => (seen.has(p.message) ? false : (seen.add(p.message), true)));
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export type ParseResult =
  { ok: true; record: HandoffRecord; document: JsonObject } | { ok: false; problems: Problem[]; document?: JsonObject };

/**
 * Parse the bytes of a file named `fileName` (e.g. `3f2a….json`): UTF-8
 * (a BOM is tolerated), JSON, the schema, and the name matching the task_id.
 */
export function parseHandoffBytes(bytes: Uint8Array, fileName: string): ParseResult {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, problems: [{ code: "not-utf8", message: "the file is not UTF-8 text" }] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const why = bytes.length === 0 ? "the file is empty" : `not valid JSON (${(e as Error).message})`;
    return { ok: false, problems: [{ code: "not-json", message: why }] };
  }
  const checked = checkDocument(value);
  if (!checked.ok) return checked;
  const expected = `${checked.record.task_id}.json`;
  if (fileName !== expected) {
    return {
      ok: false,
      document: checked.document,
      problems: [
        {
          code: "name-mismatch",
          message: `the file name ${fileName} does not match its task_id "${checked.record.task_id}" (expected ${expected})`,
        },
      ],
    };
  }
  return checked;
}

/**
 * The document to write for `record`, starting from the document read from
 * the file (`base`): the eight fields take their new values in place, unknown
 * fields stay where they were, and fields new to the file are appended in
 * FIELD_ORDER. Without a base, the eight fields in FIELD_ORDER.
 */
export function toDocument(record: HandoffRecord, base?: JsonObject): JsonObject {
  // A null-prototype object, so a "__proto__" key read from a file stays a plain field.
  const out = Object.create(null) as JsonObject;
  const fields: Record<string, JsonValue> = { ...record };
  if (base) {
    for (const [k, v] of Object.entries(base)) out[k] = k in fields ? (fields[k] as JsonValue) : v;
  }
  for (const k of FIELD_ORDER) if (!(k in out)) out[k] = fields[k] as JsonValue;
  return out;
}

/** The bytes Baton writes: two-space indented JSON and a final newline. */
export function serializeDocument(doc: JsonObject): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** ISO 8601 in UTC with milliseconds, as Baton writes created_at/updated_at. */
export function isoNow(nowMs: number): string {
  return new Date(nowMs).toISOString();
}
