// OpenID Connect settings from the environment. Server-side only.
//
//   BATON_OIDC_ISSUER         issuer URL (https; http only on loopback, for development)
//   BATON_OIDC_CLIENT_ID      client id registered at the provider
//   BATON_OIDC_CLIENT_SECRET  client secret; unset for a public client (PKCE only)
//   BATON_OIDC_REDIRECT_URL   default <console origin>/auth/oidc/callback
//   BATON_OIDC_SCOPES         extra scopes besides "openid email profile" (space separated)
//   BATON_OIDC_ROLE_CLAIM     claim holding roles or groups, e.g. "groups" or "realm_access.roles"
//   BATON_OIDC_ROLE_MAP       claim value → role, e.g. "oncall-leads=approver,sre=operator";
//                             without it, values equal to a role name ("operator") map directly
//   BATON_OIDC_DEFAULT_ROLE   role for people the users file and role claim don't cover:
//                             viewer (default), operator, or none (refuse them)
import { ROLES, isRole, type Role } from "@/lib/authz/roles";
import type { Env } from "@/lib/accounts/env";

export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret?: string;
  redirectUrl: URL;
  scopes: readonly string[];
  roleClaim?: string;
  /** Claim value → role; undefined means values must be role names. */
  roleMap?: Readonly<Record<string, Role>>;
  /** Role for unknown users; null refuses them. */
  defaultRole: Role | null;
  /** http issuer on a loopback address (development and tests). */
  allowInsecure: boolean;
}

export class OidcConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "OidcConfigError";
  }
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

function parseUrl(variable: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OidcConfigError(variable, `not a URL: "${value}"`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new OidcConfigError(variable, `must use https (http is allowed only on localhost): "${value}"`);
  }
  if (url.hash !== "") throw new OidcConfigError(variable, "must not contain a #fragment");
  return url;
}

/** Parse "value=role,value=role" (or a JSON object) into a role map. */
export function parseRoleMap(value: string): Record<string, Role> {
  const out: Record<string, Role> = Object.create(null) as Record<string, Role>;
  const trimmed = value.trim();
  const entries: Array<[string, unknown]> = [];
  if (trimmed.startsWith("{")) {
    let raw: unknown;
    try {
      raw = JSON.parse(trimmed);
    } catch (e) {
      throw new OidcConfigError("BATON_OIDC_ROLE_MAP", `invalid JSON: ${(e as Error).message}`);
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw new OidcConfigError("BATON_OIDC_ROLE_MAP", "must be an object of claim value → role");
    }
    entries.push(...Object.entries(raw));
  } else {
    for (const part of trimmed.split(",")) {
      if (part.trim() === "") continue;
      const eq = part.lastIndexOf("=");
      if (eq <= 0) throw new OidcConfigError("BATON_OIDC_ROLE_MAP", `"${part.trim()}" should look like value=role`);
      entries.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
    }
  }
  for (const [claimValue, role] of entries) {
    if (!isRole(role)) {
      throw new OidcConfigError(
        "BATON_OIDC_ROLE_MAP",
        `"${claimValue}" maps to "${String(role)}", which is not one of ${ROLES.join(", ")}`,
      );
    }
    out[claimValue] = role;
  }
  return out;
}

/**
 * OIDC settings, or null when BATON_OIDC_ISSUER is unset (password sign-in
 * only). `origin` is the console's public origin, for the default redirect.
 */
export function oidcSettingsFromEnv(env: Env, origin: string): OidcSettings | null {
  const issuerRaw = env.BATON_OIDC_ISSUER?.trim();
  if (issuerRaw === undefined || issuerRaw === "") return null;
  const issuer = parseUrl("BATON_OIDC_ISSUER", issuerRaw);
  if (issuer.search !== "") throw new OidcConfigError("BATON_OIDC_ISSUER", "must not contain a query");

  const clientId = env.BATON_OIDC_CLIENT_ID?.trim();
  if (clientId === undefined || clientId === "")
    throw new OidcConfigError("BATON_OIDC_CLIENT_ID", "required when BATON_OIDC_ISSUER is set");
  const secret = env.BATON_OIDC_CLIENT_SECRET;

  const redirectRaw = env.BATON_OIDC_REDIRECT_URL?.trim();
  const redirectUrl = parseUrl(
    "BATON_OIDC_REDIRECT_URL",
    redirectRaw !== undefined && redirectRaw !== "" ? redirectRaw : `${origin.replace(/\/+$/, "")}/auth/oidc/callback`,
  );

  const extra = (env.BATON_OIDC_SCOPES ?? "").split(/[\s,]+/).filter((s) => s !== "");
  for (const s of extra) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) throw new OidcConfigError("BATON_OIDC_SCOPES", `invalid scope "${s}"`);
  }
  const scopes = [...new Set(["openid", "email", "profile", ...extra])];

  const roleClaim = env.BATON_OIDC_ROLE_CLAIM?.trim();
  const roleMapRaw = env.BATON_OIDC_ROLE_MAP;
  const defaultRaw = (env.BATON_OIDC_DEFAULT_ROLE ?? "viewer").trim().toLowerCase();
  let defaultRole: Role | null;
  if (defaultRaw === "none") defaultRole = null;
  else if (defaultRaw === "viewer" || defaultRaw === "operator") defaultRole = defaultRaw;
  else throw new OidcConfigError("BATON_OIDC_DEFAULT_ROLE", `must be viewer, operator or none (got "${defaultRaw}")`);

  const settings: OidcSettings = {
    issuer,
    clientId,
    redirectUrl,
    scopes,
    defaultRole,
    allowInsecure: issuer.protocol === "http:",
  };
  if (secret !== undefined && secret !== "") settings.clientSecret = secret;
  if (roleClaim !== undefined && roleClaim !== "") settings.roleClaim = roleClaim;
  if (roleMapRaw !== undefined && roleMapRaw.trim() !== "") {
    if (!settings.roleClaim) throw new OidcConfigError("BATON_OIDC_ROLE_MAP", "needs BATON_OIDC_ROLE_CLAIM");
    settings.roleMap = parseRoleMap(roleMapRaw);
  }
  return settings;
}
