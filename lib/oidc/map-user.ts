// From an OpenID Connect sign-in's claims to a Baton user. Pure.
//
// 1. A users-file entry whose `oidcSubject` equals the `sub` claim, or else
//    whose `email` equals a *verified* email claim, decides everything (role,
//    participant id, name). A disabled entry is refused. An entry found by
//    email but bound to a different subject is refused.
// 2. Anyone else gets the role from BATON_OIDC_ROLE_CLAIM (highest match), or
//    the default role (viewer unless configured; "none" refuses them). Their
//    participant id is `oidc:<sub>`, so it can never collide with a users-file
//    participant such as `human:alice`, whatever name they choose at the IdP.
import { createHash } from "node:crypto";
import { isValidParticipantId } from "@/lib/authz/decide";
import { ROLES, higherRole, type Role } from "@/lib/authz/roles";
import type { Principal } from "@/lib/accounts/logins";
import type { UserRecord } from "@/lib/accounts/users-file";
import { OIDC_FAILURE_MESSAGES, type OidcFailure } from "@/lib/views/sign-in-forms";
import type { OidcSettings } from "./config";

export type Claims = Readonly<Record<string, unknown>>;

export type MapResult = { ok: true; user: Principal; linked: boolean } | { ok: false; code: OidcFailure; reason: string };

const refuse = (code: OidcFailure): MapResult => ({ ok: false, code, reason: OIDC_FAILURE_MESSAGES[code] });

function str(claims: Claims, name: string): string | undefined {
  const v = claims[name];
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

/** Read a claim by dotted path ("realm_access.roles"); a literal key containing dots wins. */
export function claimAt(claims: Claims, path: string): unknown {
  if (path in claims) return claims[path];
  let cur: unknown = claims;
  for (const part of path.split(".")) {
    if (typeof cur !== "object" || cur === null || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** The highest role the role claim grants, or undefined. */
export function roleFromClaims(claims: Claims, settings: Pick<OidcSettings, "roleClaim" | "roleMap">): Role | undefined {
  if (!settings.roleClaim) return undefined;
  const raw = claimAt(claims, settings.roleClaim);
  const values =
    typeof raw === "string" ? raw.split(/[\s,]+/) : Array.isArray(raw) ? raw.filter((v): v is string => typeof v === "string") : [];
  let best: Role | undefined;
  for (const value of values) {
    const v = value.trim();
    if (v === "") continue;
    let role: Role | undefined;
    if (settings.roleMap) role = Object.prototype.hasOwnProperty.call(settings.roleMap, v) ? settings.roleMap[v] : undefined;
    else role = ROLES.find((r) => r === v.toLowerCase());
    if (role) best = best ? higherRole(best, role) : role;
  }
  return best;
}

const SAFE_SUB = /^[\x21-\x7e]{1,200}$/;

export function participantIdForSubject(sub: string): string {
  return SAFE_SUB.test(sub) ? `oidc:${sub}` : `oidc:sha256-${createHash("sha256").update(sub).digest("hex").slice(0, 32)}`;
}

function clean(s: string, max: number): string {
  return s.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, max);
}

export function mapOidcUser(
  claims: Claims,
  users: readonly UserRecord[],
  settings: Pick<OidcSettings, "roleClaim" | "roleMap" | "defaultRole">,
): MapResult {
  const sub = str(claims, "sub");
  if (sub === undefined) return refuse("no_subject");
  const email = str(claims, "email");
  const verified = claims.email_verified === true;

  let entry = users.find((u) => u.oidcSubject === sub);
  if (!entry && email !== undefined && verified) {
    const byEmail = users.find((u) => u.email?.toLowerCase() === email.toLowerCase());
    if (byEmail?.oidcSubject !== undefined && byEmail.oidcSubject !== sub) {
      return refuse("linked_elsewhere");
    }
    entry = byEmail;
  }
  if (entry) {
    if (entry.disabled === true) return refuse("disabled");
    return {
      ok: true,
      linked: true,
      user: {
        username: entry.username,
        displayName: entry.displayName,
        role: entry.role,
        participantId: entry.participantId,
        authMethod: "oidc",
        oidcSubject: sub,
        ephemeral: false,
      },
    };
  }

  const role = roleFromClaims(claims, settings) ?? settings.defaultRole;
  if (role === null) {
    return refuse("no_access");
  }
  const participantId = participantIdForSubject(sub);
  if (!isValidParticipantId(participantId) || users.some((u) => u.participantId === participantId)) {
    return refuse("id_taken");
  }
  const handle = str(claims, "preferred_username") ?? email ?? sub;
  const name = str(claims, "name") ?? str(claims, "preferred_username") ?? email ?? sub;
  return {
    ok: true,
    linked: false,
    user: {
      username: `oidc:${clean(handle, 120)}`,
      displayName: clean(name, 100),
      role,
      participantId,
      authMethod: "oidc",
      oidcSubject: sub,
      ephemeral: true,
    },
  };
}
