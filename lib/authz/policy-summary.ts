// The parts of a governance policy (PROTOCOL.md §4.6, §5.6, §10.3) that decide
// who may do what in a session. Pure: shared by the server and the browser.
//
// The runtime's own `PolicyRules` (lib/runtime/policy.ts) is structurally a
// `PolicySummary`, so the gateway can pass a bound policy's rules directly;
// the browser can build one from a PolicyDescriptor's rules JSON with
// `summarizePolicyRules`.

export type CommitmentAuthority = "initiator_only" | "any_participant" | "designated_role";

export interface PolicySummary {
  commitment?: {
    /** Unknown values behave like `initiator_only`, as in the reference runtime. */
    authority?: string;
    designatedRoles?: readonly string[];
  };
  acceptance?: { implicitAcceptTimeoutMs?: number };
  assignment?: { allowReassignmentOnReject?: boolean };
  completion?: { requireOutput?: boolean };
}

/** The built-in `policy.default`: only the initiator commits, nothing else constrained. */
export const DEFAULT_POLICY_SUMMARY: PolicySummary = Object.freeze({
  commitment: Object.freeze({ authority: "initiator_only", designatedRoles: Object.freeze([]) as readonly string[] }),
  acceptance: Object.freeze({ implicitAcceptTimeoutMs: 0 }),
  assignment: Object.freeze({ allowReassignmentOnReject: false }),
  completion: Object.freeze({ requireOutput: false }),
});

export function commitmentAuthority(policy: PolicySummary): CommitmentAuthority {
  const a = policy.commitment?.authority;
  return a === "any_participant" || a === "designated_role" ? a : "initiator_only";
}

export function designatedRoles(policy: PolicySummary): readonly string[] {
  return policy.commitment?.designatedRoles ?? [];
}

export function implicitAcceptTimeoutMs(policy: PolicySummary): number {
  const t = policy.acceptance?.implicitAcceptTimeoutMs ?? 0;
  return Number.isFinite(t) && t > 0 ? t : 0;
}

export function allowsReassignment(policy: PolicySummary): boolean {
  return policy.assignment?.allowReassignmentOnReject === true;
}

export function requiresOutput(policy: PolicySummary): boolean {
  return policy.completion?.requireOutput === true;
}

/**
 * Commitment authority (§10.3): who may send a Commitment. The same rule,
 * plus "is the initiator", decides who may cancel, suspend and resume (§3.7).
 */
export function hasCommitmentAuthority(
  policy: PolicySummary,
  participantId: string,
  initiator: string,
  participants: readonly string[],
): boolean {
  if (participantId === "") return false;
  switch (commitmentAuthority(policy)) {
    case "any_participant":
      return participantId === initiator || participants.includes(participantId);
    case "designated_role":
      return designatedRoles(policy).includes(participantId);
    default:
      return participantId === initiator;
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Lenient reading of a PolicyDescriptor's `rules` JSON (snake_case, as on the
 * wire). Anything malformed falls back to the default, like the runtime does
 * for bound copies; the runtime validated the rules when they were registered.
 */
export function summarizePolicyRules(rulesJson: string): PolicySummary {
  let raw: unknown;
  try {
    raw = rulesJson.trim() === "" ? {} : JSON.parse(rulesJson);
  } catch {
    return DEFAULT_POLICY_SUMMARY;
  }
  if (!isObj(raw)) return DEFAULT_POLICY_SUMMARY;
  const group = (name: string): Obj => {
    const g = raw[name];
    return isObj(g) ? g : {};
  };
  const c = group("commitment");
  const roles =
    Array.isArray(c.designated_roles) && c.designated_roles.every((r) => typeof r === "string") ? (c.designated_roles as string[]) : [];
  const timeout = group("acceptance").implicit_accept_timeout_ms;
  return {
    commitment: { authority: typeof c.authority === "string" ? c.authority : "initiator_only", designatedRoles: roles },
    acceptance: {
      implicitAcceptTimeoutMs: typeof timeout === "number" && Number.isInteger(timeout) && timeout > 0 ? timeout : 0,
    },
    assignment: { allowReassignmentOnReject: group("assignment").allow_reassignment_on_reject === true },
    completion: { requireOutput: group("completion").require_output === true },
  };
}
