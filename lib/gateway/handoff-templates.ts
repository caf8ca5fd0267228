// Saved "Hand off…" forms for recurring rotations, per person, in the
// console's data folder (handoff-templates.sqlite next to the catalog). What
// a template may hold is the action contract (lib/actions/rules.ts), checked
// at the edge (parseTemplate below) before anything is stored; how many a
// person keeps is bounded (LIMITS.templatesPerPerson), so the file grows with
// people, not with use. Who may keep templates is decide()'s
// "manageHandoffTemplates".
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { openSideDatabase } from "@/lib/base/side-database";
import { Code, ConnectError } from "@connectrpc/connect";
import { checkParticipant, checkRotation, checkRunbook, checkText, LIMITS, TEXT_FIELDS, type Problem } from "@/lib/actions/rules";
import { PolicyChoice, type HandoffTemplate } from "@/lib/gen/baton/v1/actions_pb";
import { MAX_TTL_MS } from "@/lib/macp/constants";
import { invalidField } from "./action-input";

/** A template as given: the generated HandoffTemplate's fields, without the server's time stamp. */
export type TemplateInput = Omit<HandoffTemplate, "$typeName" | "$unknown" | "updatedUnixMs">;

/** A template as stored and returned. */
export interface TemplateRecord extends TemplateInput {
  updatedMs: number;
}

const TEMPLATE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function problemText(p: Problem): string {
  switch (p.code) {
    case "required":
      return "is required";
    case "too-long":
      return `is longer than ${p.max} characters`;
    case "too-large":
      return `is ${p.bytes} bytes; at most ${p.max} bytes`;
    case "control":
      return "contains control characters";
    case "line-break":
      return "must be one line";
    case "not-participant":
      return "is not a participant id (no spaces, at most 512 characters)";
    case "nul":
      return "contains NUL characters";
    case "too-many":
      return `has ${p.count}; at most ${p.max} are allowed`;
    default:
      return "is not allowed";
  }
}

function text(field: string, raw: string, rule: { max: number; required?: boolean; multiline?: boolean }): string {
  const { value, problem } = checkText(raw, rule);
  if (problem) throw invalidField(field, problemText(problem));
  return value;
}

/** A SaveHandoffTemplate request's template, checked with the action contract; "" id: a new one. */
export function parseTemplate(t: HandoffTemplate | undefined): TemplateInput {
  if (!t) throw invalidField("template", "is required");
  const id = t.id.trim().toLowerCase();
  if (id !== "" && !TEMPLATE_ID.test(id)) throw invalidField("template.id", "must be an id the console made, or empty for a new template");
  const name = text("template.name", t.name, TEXT_FIELDS.templateName.rule);
  let target = "";
  if (t.target.trim() !== "") {
    const c = checkParticipant(t.target);
    if (c.problem) throw invalidField("template.target", problemText(c.problem));
    target = c.value;
  }
  const rotation = checkRotation(t.participants, { target });
  if (rotation.problem) {
    const { index, problem } = rotation.problem;
    throw invalidField(index < 0 ? "template.participants" : `template.participants[${index}]`, problemText(problem));
  }
  const scope = text("template.scope", t.scope, TEXT_FIELDS.scope.rule);
  const reason = text("template.reason", t.reason, TEXT_FIELDS.reason.rule);
  const runbook = checkRunbook(t.runbookMarkdown);
  if (runbook) throw invalidField("template.runbook_markdown", problemText(runbook));
  const ttlMs = t.ttlMs === 0 ? LIMITS.defaultTtlMs : t.ttlMs;
  if (ttlMs < 60_000 || ttlMs > MAX_TTL_MS) throw invalidField("template.ttl_ms", `must be between 60000 and ${MAX_TTL_MS} ms`);
  let approvers: string[] = [];
  let implicitAcceptTimeoutMs = 0;
  switch (t.policy) {
    case PolicyChoice.UNSPECIFIED:
    case PolicyChoice.DEFAULT:
      break;
    case PolicyChoice.LEAD_APPROVAL:
      if (t.approvers.length > LIMITS.approvers) throw invalidField("template.approvers", `at most ${LIMITS.approvers} approvers`);
      approvers = t.approvers.map((raw, i) => {
        const c = checkParticipant(raw);
        if (c.problem) throw invalidField(`template.approvers[${i}]`, problemText(c.problem));
        return c.value;
      });
      approvers = [...new Set(approvers)];
      break;
    case PolicyChoice.IMPLICIT_ACCEPT:
      implicitAcceptTimeoutMs = t.implicitAcceptTimeoutMs;
      if (implicitAcceptTimeoutMs < LIMITS.minImplicitAcceptMs || implicitAcceptTimeoutMs > MAX_TTL_MS) {
        throw invalidField("template.implicit_accept_timeout_ms", `must be between ${LIMITS.minImplicitAcceptMs} and ${MAX_TTL_MS} ms`);
      }
      break;
    default:
      throw invalidField("template.policy", `unknown policy choice ${String(t.policy)}`);
  }
  const policy = t.policy === PolicyChoice.UNSPECIFIED ? PolicyChoice.DEFAULT : t.policy;
  return {
    id,
    name,
    target,
    scope,
    reason,
    runbookMarkdown: t.runbookMarkdown.trim() === "" ? "" : t.runbookMarkdown,
    policy,
    approvers,
    implicitAcceptTimeoutMs,
    ttlMs,
    participants: rotation.value,
  };
}

/** A template id in a DeleteHandoffTemplate request. */
export function parseTemplateId(raw: string): string {
  const id = raw.trim().toLowerCase();
  if (id === "") throw invalidField("id", "is required");
  if (id.length > LIMITS.templateId || !TEMPLATE_ID.test(id)) throw invalidField("id", "is not a template id");
  return id;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS templates (
  owner TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  body TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (owner, id)
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS templates_name ON templates (owner, name);
`;

interface Row {
  id: string;
  name: string;
  body: string;
  updated_ms: number;
}

type Body = Omit<TemplateRecord, "id" | "name" | "updatedMs">;

function fromRow(r: Row): TemplateRecord {
  const b = JSON.parse(r.body) as Omit<Body, "participants"> & { participants?: string[] };
  // Templates saved before "Also on the rotation" have no participants.
  return { id: r.id, name: r.name, updatedMs: r.updated_ms, ...b, participants: b.participants ?? [] };
}

export class HandoffTemplateStore {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(
    file: string,
    private readonly now: () => number = Date.now,
    readonly maxPerPerson: number = LIMITS.templatesPerPerson,
  ) {
    this.db = openSideDatabase(file, SCHEMA);
    this.stmts = {
      list: this.db.prepare<[string, number], Row>(
        "SELECT id, name, body, updated_ms FROM templates WHERE owner = ? ORDER BY name COLLATE NOCASE, name LIMIT ?",
      ),
      count: this.db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM templates WHERE owner = ?"),
      byId: this.db.prepare<[string, string], Row>("SELECT id, name, body, updated_ms FROM templates WHERE owner = ? AND id = ?"),
      byName: this.db.prepare<[string, string], Row>("SELECT id, name, body, updated_ms FROM templates WHERE owner = ? AND name = ?"),
      insert: this.db.prepare<[string, string, string, string, number]>(
        "INSERT INTO templates (owner, id, name, body, updated_ms) VALUES (?, ?, ?, ?, ?)",
      ),
      update: this.db.prepare<[string, string, number, string, string]>(
        "UPDATE templates SET name = ?, body = ?, updated_ms = ? WHERE owner = ? AND id = ?",
      ),
      remove: this.db.prepare<[string, string]>("DELETE FROM templates WHERE owner = ? AND id = ?"),
      removeByName: this.db.prepare<[string, string, string]>("DELETE FROM templates WHERE owner = ? AND name = ? AND id <> ?"),
    };
  }

  /** One person's templates by name (at most maxPerPerson). */
  list(owner: string): TemplateRecord[] {
    return this.stmts.list.all(owner, this.maxPerPerson).map(fromRow);
  }

  /**
   * Save: replace the template with this id, else the one with this name,
   * else add one (RESOURCE_EXHAUSTED when the person keeps the most allowed).
   * Renaming onto another template's name replaces that one.
   */
  save(owner: string, input: TemplateInput): TemplateRecord {
    const { id: wanted, name, ...given } = input;
    // The owner is in every session they start: not kept as one more on the rotation.
    const rest = { ...given, participants: given.participants.filter((p) => p !== owner) };
    const body = JSON.stringify(rest satisfies Body);
    const at = this.now();
    return this.db.transaction((): TemplateRecord => {
      const existing = (wanted !== "" ? this.stmts.byId.get(owner, wanted) : undefined) ?? this.stmts.byName.get(owner, name);
      if (existing) {
        this.stmts.removeByName.run(owner, name, existing.id);
        this.stmts.update.run(name, body, at, owner, existing.id);
        return { id: existing.id, name, updatedMs: at, ...rest };
      }
      if (wanted !== "")
        throw new ConnectError(`You have no template ${wanted} (it may have been deleted); save it as a new one.`, Code.NotFound);
      const n = this.stmts.count.get(owner)?.n ?? 0;
      if (n >= this.maxPerPerson) {
        throw new ConnectError(
          `You already keep ${n} templates, the most allowed; delete one or save over an existing one.`,
          Code.ResourceExhausted,
        );
      }
      const id = randomUUID();
      this.stmts.insert.run(owner, id, name, body, at);
      return { id, name, updatedMs: at, ...rest };
    })();
  }

  /** Delete one of the person's templates; false when there was none with this id. */
  delete(owner: string, id: string): boolean {
    return this.stmts.remove.run(owner, id).changes > 0;
  }

  close(): void {
    this.db.close();
  }
}
