// Errors of the v0.1 handoff library. Each carries a `kind` that callers
// map to their own vocabulary (the CLI: exit 64 for usage kinds, 2 for
// refusals; the console later: a Connect code).

export type HandoffErrorKind =
  /** No handoff matches the id or prefix. */
  | "not-found"
  /** The prefix matches several handoffs. */
  | "ambiguous"
  /** Bad input from the caller (empty agent, bad task id, …). */
  | "bad-input"
  /** The file is not a valid v0.1 handoff; it is left as it is. */
  | "invalid"
  /** The state machine does not allow this step. */
  | "illegal-transition"
  /** The step is allowed, but not for this agent (e.g. offered to someone else). */
  | "not-allowed"
  /** The file changed since it was read (another writer got there first). */
  | "conflict"
  /** The file changed while Baton held its lock: a writer that ignores the lock. Nothing was overwritten. */
  | "foreign-writer"
  /** Another writer held the lock for longer than the wait. */
  | "lock-busy"
  /** The lock was taken over (judged stale) while held; nothing was written. */
  | "lock-lost"
  /** The file or the record to write is over the size limit. */
  | "too-large"
  /** A symbolic link: read, never written through. */
  | "read-only"
  /** A handoff with this task_id exists already. */
  | "exists";

export class HandoffError extends Error {
  override name = "HandoffError";
  constructor(
    readonly kind: HandoffErrorKind,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

/** Kinds that mean "the request itself was wrong" (the CLI's usage exit). */
export const USAGE_KINDS: ReadonlySet<HandoffErrorKind> = new Set(["ambiguous", "bad-input"]);
