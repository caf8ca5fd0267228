// One definition of each query key.
export const queryKeys = {
  /** Pages of the session list: the list's query (listQueryKey) and the page index. */
  sessionPages: ["baton", "session-page"] as const,
  sessionPage: (listKey: string, page: number) => ["baton", "session-page", listKey, page] as const,
  /** Whole-catalog counts beside the list ("of M sessions · K open"). */
  sessionCounts: ["baton", "session-count"] as const,
  sessionCount: (which: "all" | "open") => ["baton", "session-count", which] as const,
  session: (sessionId: string) => ["baton", "session", sessionId] as const,
  directory: ["baton", "directory"] as const,
  capabilities: ["baton", "capabilities"] as const,
  policy: (policyId: string) => ["baton", "policy", policyId] as const,
};
