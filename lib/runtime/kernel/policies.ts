// The registry of governance policies (PROTOCOL.md §6): the built-in default
// plus the registered ones, kept in memory and written through to the store.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DEFAULT_POLICY_ID } from "@/lib/macp/constants";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import { DEFAULT_POLICY, validateDescriptor } from "../policy";
import type { Store } from "../store/types";

export class PolicyRegistry {
  private policies = new Map<string, PolicyDescriptor>();

  constructor(
    private readonly store: Store,
    private readonly clock: () => number,
    private readonly changed: (all: PolicyDescriptor[]) => void,
  ) {}

  /** Replace what is held with what the store holds. */
  load(): void {
    this.policies = new Map();
    for (const p of this.store.loadPolicies()) {
      this.policies.set(p.policyId, fromBinary(PolicyDescriptorSchema, p.descriptor));
    }
  }

  get size(): number {
    return this.policies.size;
  }

  /** A registered policy (not the default). */
  registered(id: string): PolicyDescriptor | undefined {
    return this.policies.get(id);
  }

  list(modeFilter = ""): PolicyDescriptor[] {
    const all = [DEFAULT_POLICY.descriptor, ...this.policies.values()];
    return all
      .filter((d) => modeFilter === "" || d.mode === modeFilter || d.mode === "*")
      .sort((a, b) => a.policyId.localeCompare(b.policyId));
  }

  get(id: string): PolicyDescriptor | undefined {
    return id === DEFAULT_POLICY_ID ? DEFAULT_POLICY.descriptor : this.policies.get(id);
  }

  /** Register a policy; null, or why it was refused. */
  async register(d: PolicyDescriptor): Promise<string | null> {
    const err = validateDescriptor(d, (id) => this.policies.has(id));
    if (err) return err;
    const stored = create(PolicyDescriptorSchema, { ...d, registeredAtUnixMs: BigInt(this.clock()) });
    this.policies.set(d.policyId, stored);
    try {
      await this.store.putPolicy({ policyId: d.policyId, descriptor: toBinary(PolicyDescriptorSchema, stored) });
    } catch (e) {
      this.policies.delete(d.policyId);
      return `storage failure: ${(e as Error).message}`;
    }
    this.changed(this.list());
    return null;
  }

  /** Unregister a policy; null, or why it was refused. */
  async unregister(id: string): Promise<string | null> {
    if (id === DEFAULT_POLICY_ID) return "policy.default is built in and cannot be unregistered";
    const d = this.policies.get(id);
    if (!d) return `policy ${id} is not registered`;
    this.policies.delete(id);
    try {
      await this.store.deletePolicy(id);
    } catch (e) {
      this.policies.set(id, d);
      return `storage failure: ${(e as Error).message}`;
    }
    this.changed(this.list());
    return null;
  }
}
