// Governance policies the console registers for sessions people start
// ("requires lead approval", implicit accept), and a cache of policy rules for
// authorization decisions.
//
// Policies are immutable once registered (PROTOCOL.md §10.5), so the console
// names each one after its content: `policy.baton.<kind>.<hash>` where the
// hash covers the mode and the canonical rule JSON. The same choice (same
// approvers, same timeout) always maps to the same id, so it is registered
// once and reused by every later session.
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import { summarizePolicyRules, type PolicySummary } from "@/lib/authz/policy-summary";
import { DEFAULT_POLICY_ID } from "@/lib/macp/constants";
import type { PolicyRequest } from "./action-input";
import type { RuntimeActions } from "./runtime-actions";

/** JSON with object keys sorted, so equal rules give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function sameRules(a: string, b: string): boolean {
  try {
    return canonicalJson(JSON.parse(a || "{}")) === canonicalJson(JSON.parse(b || "{}"));
  } catch {
    return a === b;
  }
}

/**
 * The descriptor for a policy choice in `mode`, or null for policy.default.
 * `nameOf` gives display names for the description.
 */
export function policyDescriptorFor(
  mode: string,
  choice: PolicyRequest,
  nameOf: (participantId: string) => string,
): PolicyDescriptor | null {
  let rules: Record<string, unknown>;
  let kind: string;
  let description: string;
  switch (choice.kind) {
    case "default":
      return null;
    case "approval": {
      const approvers = [...new Set(choice.approvers)].sort();
      rules = { commitment: { authority: "designated_role", designated_roles: approvers } };
      kind = "lead-approval";
      description = `Baton console: requires approval; only ${approvers.map(nameOf).join(", ")} may commit`;
      break;
    }
    case "implicit":
      rules = { acceptance: { implicit_accept_timeout_ms: choice.timeoutMs } };
      kind = "implicit-accept";
      description = `Baton console: an offer unanswered for ${choice.timeoutMs} ms counts as accepted`;
      break;
  }
  const text = canonicalJson(rules);
  const hash = createHash("sha256").update(mode).update("\n").update(text).digest("hex").slice(0, 16);
  return create(PolicyDescriptorSchema, {
    policyId: `policy.baton.${kind}.${hash}`,
    mode,
    description: description.length > 500 ? `${description.slice(0, 497)}...` : description,
    rules: text,
    schemaVersion: 1,
  });
}

/** Rules of registered policies, for decide(). Policies never change, so they are cached. */
export class PolicyCache {
  private readonly known = new Map<string, PolicySummary>();
  private readonly loading = new Map<string, Promise<PolicySummary | undefined>>();

  constructor(private readonly get: (policyId: string, signal?: AbortSignal) => Promise<PolicyDescriptor | null>) {}

  /** Cached rules; undefined until loaded (or for unknown policies). */
  peek(policyId: string): PolicySummary | undefined {
    return this.known.get(policyId);
  }

  remember(descriptor: PolicyDescriptor): void {
    this.known.set(descriptor.policyId, summarizePolicyRules(descriptor.rules));
  }

  /** Rules for `policyId`; undefined for policy.default (decide() knows it) or a policy the runtime does not have. */
  async summary(policyId: string, signal?: AbortSignal): Promise<PolicySummary | undefined> {
    if (policyId === "" || policyId === DEFAULT_POLICY_ID) return undefined;
    const hit = this.known.get(policyId);
    if (hit) return hit;
    let p = this.loading.get(policyId);
    if (!p) {
      p = this.get(policyId, signal)
        .then((d) => {
          if (!d) return undefined;
          this.remember(d);
          return this.known.get(policyId);
        })
        .finally(() => this.loading.delete(policyId));
      this.loading.set(policyId, p);
    }
    return p;
  }
}

/**
 * Make sure `descriptor` is registered: reuse it when a policy with that id
 * and the same rules exists, otherwise register it with `credential` (the
 * person starting the session).
 */
export async function ensurePolicy(
  runtime: RuntimeActions,
  cache: PolicyCache,
  descriptor: PolicyDescriptor,
  credential: string,
  who: string,
  signal?: AbortSignal,
): Promise<void> {
  const check = (existing: PolicyDescriptor): void => {
    if (!sameRules(existing.rules, descriptor.rules) || existing.mode !== descriptor.mode) {
      throw new ConnectError(
        `policy ${descriptor.policyId} is registered on the runtime with other rules; an admin should unregister it`,
        Code.FailedPrecondition,
      );
    }
    cache.remember(existing);
  };
  const existing = await runtime.getPolicy(descriptor.policyId, signal);
  if (existing) return check(existing);
  let registered: { ok: boolean; error: string };
  try {
    registered = await runtime.registerPolicy(descriptor, credential, signal);
  } catch (e) {
    const ce = ConnectError.from(e);
    if (ce.code === Code.PermissionDenied || ce.code === Code.Unauthenticated) {
      throw new ConnectError(
        `The runtime did not let ${who} register the session's policy (${ce.rawMessage}). Ask an admin to give that runtime identity policy rights, or to register ${descriptor.policyId}.`,
        Code.FailedPrecondition,
      );
    }
    throw ce;
  }
  if (registered.ok) {
    cache.remember(descriptor);
    return;
  }
  // Someone registered it between our read and our write: use theirs if it matches.
  const now = await runtime.getPolicy(descriptor.policyId, signal);
  if (now) return check(now);
  throw new ConnectError(`the runtime refused policy ${descriptor.policyId}: ${registered.error}`, Code.FailedPrecondition);
}
