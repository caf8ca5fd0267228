// Governance policies (PROTOCOL.md §10): rule parsing and validation for the
// modes Baton implements, the built-in policy.default, and the registry.
import { create } from "@bufbuild/protobuf";
import { DEFAULT_POLICY_ID, HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";

export type CommitmentAuthority = "initiator_only" | "any_participant" | "designated_role";
const AUTHORITIES: readonly CommitmentAuthority[] = ["initiator_only", "any_participant", "designated_role"];

export interface PolicyRules {
  commitment: { authority: CommitmentAuthority; designatedRoles: string[] };
  acceptance: { implicitAcceptTimeoutMs: number };
  assignment: { allowReassignmentOnReject: boolean };
  completion: { requireOutput: boolean };
}

export interface BoundPolicy {
  descriptor: PolicyDescriptor;
  rules: PolicyRules;
}

export const DEFAULT_RULES: PolicyRules = {
  commitment: { authority: "initiator_only", designatedRoles: [] },
  acceptance: { implicitAcceptTimeoutMs: 0 },
  assignment: { allowReassignmentOnReject: false },
  completion: { requireOutput: false },
};

export const DEFAULT_POLICY: BoundPolicy = {
  descriptor: create(PolicyDescriptorSchema, {
    policyId: DEFAULT_POLICY_ID,
    mode: "*",
    description: "Built-in default: only the initiator commits; no extra constraints.",
    rules: JSON.stringify({
      commitment: { authority: "initiator_only", designated_roles: [] },
    }),
    schemaVersion: 1,
  }),
  rules: DEFAULT_RULES,
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Parse rule JSON for `mode`. strict=true (registration) reports every type
 * mismatch and unknown authority; strict=false (bound copies on replay)
 * falls back to defaults the way the reference evaluator does.
 */
export function parseRules(mode: string, rulesJson: string, strict: boolean): { rules: PolicyRules } | { error: string } {
  let raw: unknown;
  try {
    raw = rulesJson.trim() === "" ? {} : JSON.parse(rulesJson);
  } catch (e) {
    if (!strict) return { rules: DEFAULT_RULES };
    return { error: `rules is not valid JSON: ${(e as Error).message}` };
  }
  if (!isObj(raw)) return strict ? { error: "rules must be a JSON object" } : { rules: DEFAULT_RULES };
  const errors: string[] = [];
  const group = (name: string): Obj => {
    const g = raw[name];
    if (g === undefined || g === null) return {};
    if (!isObj(g)) {
      errors.push(`${name} must be an object`);
      return {};
    }
    return g;
  };
  const boolAt = (g: Obj, gname: string, key: string): boolean => {
    const v = g[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== "boolean") {
      errors.push(`${gname}.${key} must be a boolean`);
      return false;
    }
    return v;
  };

  const c = group("commitment");
  let authority: CommitmentAuthority = "initiator_only";
  if (c.authority !== undefined && c.authority !== null) {
    if (typeof c.authority !== "string") errors.push("commitment.authority must be a string");
    else if ((AUTHORITIES as readonly string[]).includes(c.authority)) authority = c.authority as CommitmentAuthority;
    else if (strict) errors.push(`commitment.authority must be one of ${AUTHORITIES.join(", ")}`);
  }
  let designatedRoles: string[] = [];
  if (c.designated_roles !== undefined && c.designated_roles !== null) {
    if (!Array.isArray(c.designated_roles) || !c.designated_roles.every((r) => typeof r === "string")) {
      errors.push("commitment.designated_roles must be a list of strings");
    } else designatedRoles = c.designated_roles as string[];
  }
  if (authority === "designated_role" && designatedRoles.filter((r) => r.trim() !== "").length === 0) {
    errors.push("commitment.authority designated_role needs a non-empty commitment.designated_roles");
  }

  let implicitAcceptTimeoutMs = 0;
  let allowReassignmentOnReject = false;
  let requireOutput = false;
  if (mode === HANDOFF_MODE || mode === "*") {
    const a = group("acceptance");
    const t = a.implicit_accept_timeout_ms;
    if (t !== undefined && t !== null) {
      if (typeof t !== "number" || !Number.isInteger(t) || t < 0) {
        errors.push("acceptance.implicit_accept_timeout_ms must be an integer >= 0");
      } else implicitAcceptTimeoutMs = t;
    }
  }
  if (mode === TASK_MODE || mode === "*") {
    allowReassignmentOnReject = boolAt(group("assignment"), "assignment", "allow_reassignment_on_reject");
    requireOutput = boolAt(group("completion"), "completion", "require_output");
  }
  if (errors.length && strict) return { error: errors.join("; ") };
  return {
    rules: {
      commitment: { authority, designatedRoles },
      acceptance: { implicitAcceptTimeoutMs },
      assignment: { allowReassignmentOnReject },
      completion: { requireOutput },
    },
  };
}

export function bindPolicy(descriptor: PolicyDescriptor, sessionMode: string): BoundPolicy {
  if (descriptor.policyId === DEFAULT_POLICY_ID) return DEFAULT_POLICY;
  const parsed = parseRules(sessionMode, descriptor.rules, false);
  return { descriptor, rules: "rules" in parsed ? parsed.rules : DEFAULT_RULES };
}

/** Commitment authority (§10.3); also who besides the initiator may cancel, suspend, resume. */
export function hasCommitmentAuthority(rules: PolicyRules, sender: string, initiator: string, participants: ReadonlySet<string>): boolean {
  switch (rules.commitment.authority) {
    case "any_participant":
      return sender === initiator || participants.has(sender);
    case "designated_role":
      return rules.commitment.designatedRoles.includes(sender);
    default:
      return sender === initiator;
  }
}

/** Validation of a descriptor offered to RegisterPolicy; returns an error text or null. */
export function validateDescriptor(d: PolicyDescriptor, exists: (id: string) => boolean): string | null {
  const id = d.policyId;
  if (id.trim() === "") return "policy_id must not be blank";
  if (id !== id.trim() || /\s/.test(id)) return "policy_id must not contain whitespace";
  if (id.length > 256) return "policy_id is longer than 256 characters";
  if (id === DEFAULT_POLICY_ID) return "policy.default is built in and cannot be registered";
  if (exists(id)) return `policy ${id} is already registered (policies are immutable)`;
  if (d.mode.trim() === "") return 'mode must be a mode id or "*"';
  if (d.schemaVersion === 0) return "schema_version must be 1 or 2";
  const parsed = parseRules(d.mode, d.rules, true);
  if ("error" in parsed) return parsed.error;
  return null;
}
