// The console's logins file format (version 1), written by login-file.ts:
//
//   {
//     "version": 1,
//     "secretFingerprint": "<HMAC of a constant under the session secret>",
//     "savedAt": 1714532400000,
//     "sessions": {
//       "<SHA-256 of the session id, base64url>": {
//         "principal": { "username", "displayName", "role", "participantId",
//                        "authMethod", "oidcSubject"?, "ephemeral" },
//         "csrfToken": "…", "createdAt": …, "lastSeenAt": …, "expiresAt": …,
//         "ip"?: "…", "userAgent"?: "…", "credentialTag"?: "…"
//       }
//     }
//   }
//
// Raw session ids are never written: a cookie is looked up by hashing the id
// it carries (after its HMAC verified). A file written under another session
// secret is ignored (those cookies no longer verify anyway). A file that is
// not a logins file at all throws CorruptLoginsFile; a malformed record is
// reported and dropped alone.
import { createHmac } from "node:crypto";
import { isRole } from "@/lib/authz/roles";
import { MAX_IP_CHARS, MAX_USER_AGENT_CHARS, type Principal, type StoredLogin } from "./logins";

export const LOGINS_FILE_VERSION = 1;

/** Which secret the sessions were written under, without revealing it. */
export function secretFingerprint(secret: Buffer): string {
  return createHmac("sha256", secret).update("baton console sessions file v1").digest("base64url").slice(0, 22);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const B64URL_43 = /^[A-Za-z0-9_-]{43}$/;
const B64URL_22 = /^[A-Za-z0-9_-]{22}$/;
const MAX_TEXT = 1024;

const PRINCIPAL_KEYS: ReadonlySet<string> = new Set([
  "username",
  "displayName",
  "role",
  "participantId",
  "authMethod",
  "oidcSubject",
  "ephemeral",
]);
const RECORD_KEYS: ReadonlySet<string> = new Set([
  "principal",
  "csrfToken",
  "createdAt",
  "lastSeenAt",
  "expiresAt",
  "ip",
  "userAgent",
  "credentialTag",
]);

function text(v: unknown, max = MAX_TEXT): v is string {
  return typeof v === "string" && v !== "" && v.length <= max;
}

function time(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function unknownKey(o: Obj, allowed: ReadonlySet<string>): string | undefined {
  return Object.keys(o).find((k) => !allowed.has(k));
}

function parsePrincipal(v: unknown): Principal | string {
  if (!isObj(v)) return "principal: must be an object";
  const extra = unknownKey(v, PRINCIPAL_KEYS);
  if (extra !== undefined) return `principal: unknown field ${JSON.stringify(extra)}`;
  const { username, displayName, role, participantId, authMethod, oidcSubject, ephemeral } = v;
  if (!text(username)) return "principal.username: must be a non-empty string";
  if (!text(displayName)) return "principal.displayName: must be a non-empty string";
  if (!isRole(role)) return "principal.role: must be a role";
  if (!text(participantId)) return "principal.participantId: must be a non-empty string";
  if (authMethod !== "password" && authMethod !== "oidc") return 'principal.authMethod: must be "password" or "oidc"';
  if (oidcSubject !== undefined && !text(oidcSubject)) return "principal.oidcSubject: must be a non-empty string";
  if (typeof ephemeral !== "boolean") return "principal.ephemeral: must be true or false";
  if (ephemeral && (authMethod !== "oidc" || oidcSubject === undefined))
    return "principal: an ephemeral principal must be an OIDC sign-in with a subject";
  return { username, displayName, role, participantId, authMethod, ephemeral, ...(oidcSubject !== undefined ? { oidcSubject } : {}) };
}

/** One persisted session, or the reason it is malformed. */
export function parseStoredLogin(key: string, v: unknown): StoredLogin | string {
  if (!B64URL_43.test(key)) return "key: must be a SHA-256 in base64url";
  if (!isObj(v)) return "must be an object";
  const extra = unknownKey(v, RECORD_KEYS);
  if (extra !== undefined) return `unknown field ${JSON.stringify(extra)}`;
  const principal = parsePrincipal(v.principal);
  if (typeof principal === "string") return principal;
  const { csrfToken, createdAt, lastSeenAt, expiresAt, ip, userAgent, credentialTag } = v;
  if (typeof csrfToken !== "string" || !B64URL_43.test(csrfToken)) return "csrfToken: must be 32 bytes in base64url";
  if (!time(createdAt) || !time(lastSeenAt) || !time(expiresAt)) return "createdAt, lastSeenAt, expiresAt: must be Unix milliseconds";
  if (lastSeenAt < createdAt || expiresAt <= createdAt) return "timestamps out of order";
  if (ip !== undefined && (typeof ip !== "string" || ip.length > MAX_IP_CHARS)) return "ip: must be a short string";
  if (userAgent !== undefined && (typeof userAgent !== "string" || userAgent.length > MAX_USER_AGENT_CHARS))
    return "userAgent: must be a short string";
  if (credentialTag !== undefined && (typeof credentialTag !== "string" || !B64URL_22.test(credentialTag)))
    return "credentialTag: malformed";
  return {
    key,
    principal,
    csrfToken,
    createdAt,
    lastSeenAt,
    expiresAt,
    ...(ip !== undefined ? { ip } : {}),
    ...(userAgent !== undefined ? { userAgent } : {}),
    ...(credentialTag !== undefined ? { credentialTag } : {}),
  };
}

/** Thrown for a file that is not a sessions file at all (moved aside at load). */
export class CorruptLoginsFile extends Error {}

export interface ParsedFile {
  fingerprint: string;
  sessions: StoredLogin[];
  malformed: string[];
}

export function parseFile(textContent: string): ParsedFile {
  let data: unknown;
  try {
    data = JSON.parse(textContent) as unknown;
  } catch (e) {
    throw new CorruptLoginsFile(`not JSON (${(e as Error).message})`);
  }
  if (!isObj(data)) throw new CorruptLoginsFile("not a JSON object");
  if (data.version !== LOGINS_FILE_VERSION)
    throw new CorruptLoginsFile(`unsupported version ${JSON.stringify(data.version)} (expected ${LOGINS_FILE_VERSION})`);
  if (typeof data.secretFingerprint !== "string") throw new CorruptLoginsFile("secretFingerprint: missing");
  if (!isObj(data.sessions)) throw new CorruptLoginsFile("sessions: must be an object");
  const sessions: StoredLogin[] = [];
  const malformed: string[] = [];
  for (const [key, value] of Object.entries(data.sessions)) {
    const parsed = parseStoredLogin(key, value);
    if (typeof parsed === "string") malformed.push(parsed);
    else sessions.push(parsed);
  }
  return { fingerprint: data.secretFingerprint, sessions, malformed };
}

export function serialize(fingerprint: string, savedAt: number, sessions: readonly StoredLogin[]): string {
  const byKey: Record<string, Omit<StoredLogin, "key">> = {};
  for (const { key, ...rest } of sessions) byKey[key] = rest;
  return `${JSON.stringify({ version: LOGINS_FILE_VERSION, secretFingerprint: fingerprint, savedAt, sessions: byKey })}\n`;
}
