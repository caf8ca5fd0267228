// The Connect error a v0.1 handoff library refusal (lib/handoff-files/errors.ts)
// becomes for the browser: a lost race is ABORTED with "reload", never an
// overwrite; the `x-baton-file` header names the kind the page explains.
import { Code, ConnectError } from "@connectrpc/connect";
import { HandoffError } from "@/lib/handoff-files";

/** The Connect error for a library refusal (lib/handoff-files/errors.ts). */
export function fileError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  if (!(e instanceof HandoffError)) return ConnectError.from(e);
  switch (e.kind) {
    case "bad-input":
    case "ambiguous":
      return new ConnectError(e.message, Code.InvalidArgument);
    case "not-found":
      return new ConnectError(e.message, Code.NotFound);
    case "conflict":
      return new ConnectError(
        `Someone else changed this handoff since you loaded it (${e.message}). Reload to see it as it is now.`,
        Code.Aborted,
        {
          "x-baton-file": "conflict",
        },
      );
    case "foreign-writer":
    case "lock-lost":
      return new ConnectError(
        `Another program wrote this handoff while Baton was writing it, without taking the lock: ${e.message}. Nothing was overwritten; reload.`,
        Code.Aborted,
        {
          "x-baton-file": "foreign-writer",
        },
      );
    case "lock-busy":
      return new ConnectError(`${e.message}. Try again in a moment.`, Code.Unavailable);
    default:
      // illegal-transition, not-allowed, invalid, read-only, too-large, exists
      return new ConnectError(e.message, Code.FailedPrecondition, { "x-baton-file": e.kind });
  }
}
