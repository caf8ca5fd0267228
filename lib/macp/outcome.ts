// Commitment outcome-suffix rule (PROTOCOL.md §3.6, check g). Pure.

/** Suffixes that require `outcome_positive = false`. */
export const NEGATIVE_ACTION_SUFFIXES = ["rejected", "failed", "declined"] as const;
/** Suffixes that require `outcome_positive = true`. */
export const POSITIVE_ACTION_SUFFIXES = ["selected", "accepted", "completed", "approved"] as const;

/**
 * The `outcome_positive` value an action requires: `false` for an action ending
 * in rejected/failed/declined, `true` for selected/accepted/completed/approved,
 * `undefined` when either is allowed. Exact, case-sensitive suffix match.
 */
export function expectedOutcome(action: string): boolean | undefined {
  if (NEGATIVE_ACTION_SUFFIXES.some((s) => action.endsWith(s))) return false;
  if (POSITIVE_ACTION_SUFFIXES.some((s) => action.endsWith(s))) return true;
  return undefined;
}

/** Whether `outcomePositive` passes check g for `action`. */
export function isOutcomeConsistent(action: string, outcomePositive: boolean): boolean {
  const expected = expectedOutcome(action);
  return expected === undefined || expected === outcomePositive;
}

/**
 * The SDK default when a caller does not set `outcome_positive`: false for
 * actions ending in rejected/failed/declined, true otherwise.
 */
export function inferOutcomePositive(action: string): boolean {
  return expectedOutcome(action) !== false;
}
