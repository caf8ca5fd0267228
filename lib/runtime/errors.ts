// A protocol rejection: the kernel throws it, the server turns it into an Ack
// error (Send), an inline stream error, or a gRPC status, per PROTOCOL.md §7.2.
import { Code, ConnectError } from "@connectrpc/connect";
import type { MacpErrorCode } from "@/lib/macp/constants";

export class MacpRejection extends Error {
  constructor(
    readonly code: MacpErrorCode,
    message: string,
    /** JSON details (POLICY_DENIED carries {"reasons":[...]}) */
    readonly details?: { reasons: string[] },
  ) {
    super(message);
    this.name = "MacpRejection";
  }
}

export const reject = (code: MacpErrorCode, message: string): never => {
  throw new MacpRejection(code, message);
};

export const policyDenied = (reason: string): never => {
  throw new MacpRejection("POLICY_DENIED", `policy denied: ${reason}`, { reasons: [reason] });
};

/** gRPC status used whenever a rejection must end a call (PROTOCOL.md §7.2). */
export function grpcCodeFor(code: MacpErrorCode): Code {
  switch (code) {
    case "UNAUTHENTICATED":
      return Code.Unauthenticated;
    case "FORBIDDEN":
      return Code.PermissionDenied;
    case "PAYLOAD_TOO_LARGE":
    case "RATE_LIMITED":
      return Code.ResourceExhausted;
    case "INTERNAL_ERROR":
      return Code.Internal;
    case "INVALID_SESSION_ID":
    case "INVALID_POLICY_DEFINITION":
      return Code.InvalidArgument;
    case "SESSION_ALREADY_EXISTS":
      return Code.AlreadyExists;
    case "SESSION_NOT_FOUND":
      return Code.NotFound;
    default:
      return Code.FailedPrecondition;
  }
}

export function toConnectError(err: MacpRejection): ConnectError {
  return new ConnectError(`${err.code}: ${err.message}`, grpcCodeFor(err.code));
}
