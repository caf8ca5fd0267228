// One definition of each query key.
export const queryKeys = {
  sessionList: ["baton", "session-list"] as const,
  session: (sessionId: string) => ["baton", "session", sessionId] as const,
  directory: ["baton", "directory"] as const,
  capabilities: ["baton", "capabilities"] as const,
  policy: (policyId: string) => ["baton", "policy", policyId] as const,
};
