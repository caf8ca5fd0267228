// The contract between the kernel and a coordination mode. A mode is pure:
// given its current state and an envelope that already passed the kernel's
// core checks, it returns the next state or throws a MacpRejection.
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { CommitmentPayload, ModeDescriptor } from "@/lib/gen/macp/v1/core_pb";
import type { BoundPolicy } from "../policy";
import { MacpRejection } from "../errors";

export interface SessionContext {
  readonly initiator: string;
  readonly participants: ReadonlySet<string>;
  readonly policy: BoundPolicy;
}

export interface ModeHandler<S> {
  readonly descriptor: ModeDescriptor;
  initialState(): S;
  /** Mode-specific SessionStart rules; returns a reason when the start is invalid. */
  validateStart(initiator: string, participants: ReadonlySet<string>): string | null;
  /** Whether the message type belongs to this mode (Commitment excluded). */
  knowsType(messageType: string): boolean;
  /** Authority matrix (sender check) for a known non-Commitment type. */
  senderAllowed(messageType: string, sender: string, ctx: SessionContext): boolean;
  /** Validate and apply a known non-Commitment message. */
  apply(state: S, env: Envelope, ctx: SessionContext): S;
  /** Mode eligibility and policy for a Commitment that passed the core checks. */
  commit(state: S, env: Envelope, commitment: CommitmentPayload, ctx: SessionContext): S;
}

export function decodeOrReject<D extends DescMessage>(schema: D, bytes: Uint8Array, what: string): MessageShape<D> {
  try {
    return fromBinary(schema, bytes);
  } catch (e) {
    throw new MacpRejection("INVALID_ENVELOPE", `payload is not a valid ${what}: ${(e as Error).message}`);
  }
}

/** Schema-version gate shared by every mode's commitment policy (§4.5, §5.5). */
export function checkSchemaVersion(policy: BoundPolicy): string | null {
  const v = policy.descriptor.schemaVersion;
  return v === 1 || v === 2 ? null : `policy ${policy.descriptor.policyId} has unsupported schema_version ${v}`;
}
