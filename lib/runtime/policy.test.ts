import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { PolicyDescriptorSchema } from "@/lib/gen/macp/v1/policy_pb";
import { DEFAULT_RULES, bindPolicy, hasCommitmentAuthority, parseRules, validateDescriptor } from "./policy";

const desc = (over: Partial<{ policyId: string; mode: string; rules: string; schemaVersion: number }>) =>
  create(PolicyDescriptorSchema, { policyId: "policy.t.x", mode: HANDOFF_MODE, rules: "{}", schemaVersion: 1, ...over });

describe("policy rules", () => {
  it("parses handoff and task knobs", () => {
    const h = parseRules(
      HANDOFF_MODE,
      JSON.stringify({ acceptance: { implicit_accept_timeout_ms: 30000 }, commitment: { authority: "any_participant" } }),
      true,
    );
    expect("rules" in h && h.rules.acceptance.implicitAcceptTimeoutMs).toBe(30000);
    expect("rules" in h && h.rules.commitment.authority).toBe("any_participant");
    const t = parseRules(
      TASK_MODE,
      JSON.stringify({ assignment: { allow_reassignment_on_reject: true }, completion: { require_output: true } }),
      true,
    );
    expect("rules" in t && t.rules.assignment.allowReassignmentOnReject && t.rules.completion.requireOutput).toBe(true);
  });

  it("reports type mismatches at registration", () => {
    expect(parseRules(HANDOFF_MODE, JSON.stringify({ acceptance: { implicit_accept_timeout_ms: -1 } }), true)).toHaveProperty("error");
    expect(parseRules(TASK_MODE, JSON.stringify({ completion: { require_output: "yes" } }), true)).toHaveProperty("error");
    expect(parseRules(HANDOFF_MODE, JSON.stringify({ commitment: { authority: "boss" } }), true)).toHaveProperty("error");
    expect(parseRules(HANDOFF_MODE, "[1]", true)).toHaveProperty("error");
    expect(parseRules(HANDOFF_MODE, "{nope", true)).toHaveProperty("error");
  });

  it("falls back to defaults for bound copies it cannot read", () => {
    expect(parseRules(HANDOFF_MODE, "{nope", false)).toEqual({ rules: DEFAULT_RULES });
    const p = parseRules(HANDOFF_MODE, JSON.stringify({ commitment: { authority: "boss" } }), false);
    expect("rules" in p && p.rules.commitment.authority).toBe("initiator_only");
  });

  it("validates descriptors offered for registration", () => {
    const none = () => false;
    expect(validateDescriptor(desc({}), none)).toBeNull();
    expect(validateDescriptor(desc({ policyId: " " }), none)).toMatch(/blank/);
    expect(validateDescriptor(desc({ policyId: "policy.default" }), none)).toMatch(/built in/);
    expect(validateDescriptor(desc({}), () => true)).toMatch(/already registered/);
    expect(validateDescriptor(desc({ schemaVersion: 0 }), none)).toMatch(/schema_version/);
    expect(
      validateDescriptor(desc({ rules: JSON.stringify({ commitment: { authority: "designated_role", designated_roles: [] } }) }), none),
    ).toMatch(/designated_roles/);
  });

  it("decides commitment authority", () => {
    const parts = new Set(["a", "b", "lead"]);
    const rules = (authority: string, roles: string[] = []) => {
      const r = parseRules(HANDOFF_MODE, JSON.stringify({ commitment: { authority, designated_roles: roles } }), false);
      if (!("rules" in r)) throw new Error("unparsable");
      return r.rules;
    };
    expect(hasCommitmentAuthority(rules("initiator_only"), "a", "a", parts)).toBe(true);
    expect(hasCommitmentAuthority(rules("initiator_only"), "b", "a", parts)).toBe(false);
    expect(hasCommitmentAuthority(rules("any_participant"), "b", "a", parts)).toBe(true);
    expect(hasCommitmentAuthority(rules("any_participant"), "z", "a", parts)).toBe(false);
    expect(hasCommitmentAuthority(rules("designated_role", ["lead"]), "lead", "a", parts)).toBe(true);
    expect(hasCommitmentAuthority(rules("designated_role", ["lead"]), "a", "a", parts)).toBe(false);
  });

  it("binds the default policy to the shared default", () => {
    const d = bindPolicy(create(PolicyDescriptorSchema, { policyId: "policy.default", mode: "*", schemaVersion: 1 }), HANDOFF_MODE);
    expect(d.rules).toEqual(DEFAULT_RULES);
  });
});
