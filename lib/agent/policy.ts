// Policy builders (PROTOCOL.md §10): typed rules in, a PolicyDescriptor init
// out, with the rule JSON in the snake_case shape the runtimes parse.

import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { PolicyInit } from "./client";

export type CommitmentAuthority = "initiator_only" | "any_participant" | "designated_role";

export interface CommitmentRules {
  authority?: CommitmentAuthority;
  /** Sender ids allowed to commit when authority is designated_role. */
  designatedRoles?: string[];
}

export interface HandoffPolicyInput {
  policyId: string;
  description?: string;
  /** An offer left unanswered this long counts as accepted at commitment time. */
  implicitAcceptTimeoutMs?: number;
  commitment?: CommitmentRules;
}

export interface TaskPolicyInput {
  policyId: string;
  description?: string;
  allowReassignmentOnReject?: boolean;
  requireOutput?: boolean;
  commitment?: CommitmentRules;
}

function commitmentJson(c: CommitmentRules | undefined): Record<string, unknown> | undefined {
  if (!c) return undefined;
  const out: Record<string, unknown> = {};
  if (c.authority) out.authority = c.authority;
  if (c.designatedRoles) out.designated_roles = c.designatedRoles;
  return out;
}

export function buildHandoffPolicy(input: HandoffPolicyInput): PolicyInit {
  const rules: Record<string, unknown> = {};
  if (input.implicitAcceptTimeoutMs !== undefined) rules.acceptance = { implicit_accept_timeout_ms: input.implicitAcceptTimeoutMs };
  const c = commitmentJson(input.commitment);
  if (c) rules.commitment = c;
  return {
    policyId: input.policyId,
    mode: HANDOFF_MODE,
    description: input.description ?? "",
    rules: JSON.stringify(rules),
    schemaVersion: 1,
  };
}

export function buildTaskPolicy(input: TaskPolicyInput): PolicyInit {
  const rules: Record<string, unknown> = {};
  if (input.allowReassignmentOnReject !== undefined) rules.assignment = { allow_reassignment_on_reject: input.allowReassignmentOnReject };
  if (input.requireOutput !== undefined) rules.completion = { require_output: input.requireOutput };
  const c = commitmentJson(input.commitment);
  if (c) rules.commitment = c;
  return {
    policyId: input.policyId,
    mode: TASK_MODE,
    description: input.description ?? "",
    rules: JSON.stringify(rules),
    schemaVersion: 1,
  };
}

/** Structural equality of two rule JSON texts (key order ignored). */
export function sameRules(a: string, b: string): boolean {
  const norm = (text: string): string => {
    try {
      return canonical(JSON.parse(text === "" ? "{}" : text));
    } catch {
      return text;
    }
  };
  return norm(a) === norm(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}
