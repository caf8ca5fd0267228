// Console roles. Pure: shared by the server, the CLI and the browser.
//
// Roles are ordered; each one includes everything the roles below it may do:
//   viewer   — watches sessions, never acts;
//   operator — starts sessions and acts in them as their own participant id;
//   approver — an operator who may also commit when the policy gives them authority;
//   admin    — everything, including cancelling any session and managing users and policies.

export const ROLES = ["viewer", "operator", "approver", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, approver: 2, admin: 3 };

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** True when `role` includes the rights of `minimum`. */
export function roleAtLeast(role: Role, minimum: Role): boolean {
  return RANK[role] >= RANK[minimum];
}

/** The higher of two roles. */
export function higherRole(a: Role, b: Role): Role {
  return RANK[a] >= RANK[b] ? a : b;
}

/** "an operator", "a viewer": for sentences. */
export function withArticle(role: Role): string {
  return role === "operator" || role === "approver" || role === "admin" ? `an ${role}` : `a ${role}`;
}

export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  viewer: "Watches sessions; cannot act in them.",
  operator: "Starts sessions and acts in them as their own participant: offers, responds to offers made to them, works on tasks.",
  approver: "Everything an operator can do, plus committing sessions where the policy gives them authority.",
  admin: "Everything, including cancelling any session and managing users and policies.",
};
