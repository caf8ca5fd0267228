// Who the console acts as on the runtime for a signed-in person.
//
// The person's MACP identity is the `participantId` of their account (e.g.
// `human:alice`); every envelope the console sends for them carries it as
// sender, whatever the browser asked. How the runtime is convinced:
// - "dev": the embedded runtime in dev auth mode, where people's ids are
//   reserved: the console sends a delegate credential for `human:alice` that
//   only it can make (lib/server/console-people.ts);
// - "tokens" (embedded runtime with static tokens, or any external runtime):
//   the account's `runtimeToken` from the users file is the bearer token, and
//   the runtime checks that it belongs to that sender. An account without one
//   cannot act, with a message saying what an admin has to do.
// Runtime credentials stay on the server; the browser never sees them.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Role } from "@/lib/authz/roles";

export type UserAuthMode = "dev" | "tokens";

/** The signed-in person as actions need them. */
export interface SignedInUser {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  /** From the users file; server-side only. */
  runtimeToken?: string;
}

export interface RuntimeIdentity {
  participantId: string;
  /** Bearer value for the runtime. */
  credential: string;
}

/**
 * `devCredential` (dev mode): the credential that acts as a participant. The
 * embedded runtime reserves people's ids, so the console presents a delegate
 * credential only it can make (lib/server/console-people.ts); without it the
 * participant id itself is the bearer value (a dev runtime without reservations).
 */
export function runtimeIdentityFor(
  mode: UserAuthMode,
  user: SignedInUser,
  devCredential?: (participantId: string) => string,
): RuntimeIdentity {
  if (mode === "dev")
    return { participantId: user.participantId, credential: devCredential ? devCredential(user.participantId) : user.participantId };
  if (user.runtimeToken === undefined || user.runtimeToken === "") {
    throw new ConnectError(
      `Your account (${user.username}) has no runtime token, so Baton cannot act as ${user.participantId} on this runtime. ` +
        `Ask an admin to add a "runtimeToken" for ${user.username} in the users file (a token the runtime maps to ${user.participantId}).`,
      Code.FailedPrecondition,
    );
  }
  return { participantId: user.participantId, credential: user.runtimeToken };
}
