// The users file's schema: the record types, the username rules and the
// validation that turns parsed JSON into a UsersFile or one UsersFileError
// listing every problem. No file access; users-file.ts reads and writes.
//
// Format (version 1):
//
//   {
//     "version": 1,
//     "users": [
//       {
//         "username": "alice",                 // required; a-z 0-9 . _ -, 1–64 chars, lowercase
//         "displayName": "Alice Ng",           // required; 1–100 chars
//         "role": "operator",                  // required; viewer | operator | approver | admin
//         "participantId": "human:alice",      // required; MACP sender id, unique; no spaces
//         "passwordHash": "scrypt$32768$8$1$<salt>$<hash>", // scrypt only; optional for OIDC-only users
//         "runtimeToken": "…",                 // optional; bearer token the gateway uses to act as this participant
//         "disabled": false,                   // optional; disabled users cannot sign in
//         "mustChangePassword": false,         // optional; set for the bootstrap admin's one-time password
//         "oidcSubject": "00u1ab…",            // optional; links an OpenID Connect `sub`, unique
//         "email": "alice@example.com"         // optional; links a verified OIDC email, unique
//       }
//     ]
//   }
import { isValidParticipantId } from "@/lib/authz/decide";
import { ROLES, isRole, type Role } from "@/lib/authz/roles";
import { parsePasswordHash } from "./password";

export const USERS_FILE_VERSION = 1;

export interface UserRecord {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  passwordHash?: string;
  runtimeToken?: string;
  disabled?: boolean;
  mustChangePassword?: boolean;
  oidcSubject?: string;
  email?: string;
}

export interface UsersFile {
  version: 1;
  users: UserRecord[];
}

export class UsersFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file} has ${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.name = "UsersFileError";
  }
}

const USERNAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Lowercase and trim a typed username (sign-in form, CLI). */
export function normalizeUsername(raw: string): string {
  return raw.trim().toLowerCase();
}

export function usernameProblem(username: string): string | null {
  if (!USERNAME.test(username)) {
    return "must be 1–64 characters: lowercase letters, digits, '.', '_' or '-', starting with a letter or digit";
  }
  return null;
}

/** The default participant id for a username. */
export function defaultParticipantId(username: string): string {
  return `human:${username}`;
}

const USER_KEYS: ReadonlySet<string> = new Set([
  "username",
  "displayName",
  "role",
  "participantId",
  "passwordHash",
  "runtimeToken",
  "disabled",
  "mustChangePassword",
  "oidcSubject",
  "email",
]);
const TOP_KEYS: ReadonlySet<string> = new Set(["version", "users", "$schema", "$comment"]);
const CONTROL = /[\u0000-\u001f\u007f]/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A value for an error message: JSON, cut to 60 characters. */
export const show = (v: unknown): string => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/**
 * Validate parsed JSON as a users file. Collects every problem (with the
 * field's path) and throws one UsersFileError naming `file`.
 */
export function validateUsersFile(raw: unknown, file: string): UsersFile {
  const problems: string[] = [];
  if (!isObj(raw)) throw new UsersFileError(file, ['the top level must be an object like {"version": 1, "users": []}']);
  for (const key of Object.keys(raw)) if (!TOP_KEYS.has(key)) problems.push(`${key}: unknown field`);
  if (raw.version !== USERS_FILE_VERSION) problems.push(`version: must be 1 (got ${show(raw.version)})`);
  if (!Array.isArray(raw.users)) {
    problems.push("users: must be a list");
    throw new UsersFileError(file, problems);
  }
  const users: UserRecord[] = [];
  const seen = {
    username: new Map<string, number>(),
    participantId: new Map<string, number>(),
    oidcSubject: new Map<string, number>(),
    email: new Map<string, number>(),
  };
  raw.users.forEach((entry: unknown, i: number) => {
    const at = (field: string) => `users[${i}].${field}`;
    if (!isObj(entry)) {
      problems.push(`users[${i}]: must be an object`);
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(entry)) if (!USER_KEYS.has(key)) problems.push(`${at(key)}: unknown field`);
    const str = (field: string, required: boolean): string | undefined => {
      const v = entry[field];
      if (v === undefined || v === null) {
        if (required) problems.push(`${at(field)}: required`);
        return undefined;
      }
      if (typeof v !== "string") {
        problems.push(`${at(field)}: must be a string (got ${show(v)})`);
        return undefined;
      }
      return v;
    };
    const bool = (field: string): boolean | undefined => {
      const v = entry[field];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "boolean") {
        problems.push(`${at(field)}: must be true or false (got ${show(v)})`);
        return undefined;
      }
      return v;
    };

    const username = str("username", true);
    if (username !== undefined) {
      const p = usernameProblem(username);
      if (p) problems.push(`${at("username")}: ${p} (got ${show(username)})`);
    }
    const displayName = str("displayName", true);
    if (displayName !== undefined && (displayName.trim() === "" || displayName.length > 100 || CONTROL.test(displayName))) {
      problems.push(`${at("displayName")}: must be 1–100 characters without control characters`);
    }
    const role = entry.role;
    if (role === undefined) problems.push(`${at("role")}: required`);
    else if (!isRole(role)) problems.push(`${at("role")}: must be one of ${ROLES.join(", ")} (got ${show(role)})`);
    const participantId = str("participantId", true);
    if (participantId !== undefined && !isValidParticipantId(participantId)) {
      problems.push(
        `${at("participantId")}: must be 1–512 characters without spaces or control characters, and not "_runtime" (got ${show(participantId)})`,
      );
    }
    const passwordHash = str("passwordHash", false);
    if (passwordHash !== undefined) {
      const parsed = parsePasswordHash(passwordHash);
      // Never echo the hash itself.
      if ("error" in parsed) problems.push(`${at("passwordHash")}: not a valid scrypt hash: ${parsed.error}`);
    }
    const runtimeToken = str("runtimeToken", false);
    if (runtimeToken !== undefined && (runtimeToken === "" || runtimeToken.length > 4096 || /[\s\u0000-\u001f\u007f]/.test(runtimeToken))) {
      problems.push(`${at("runtimeToken")}: must be 1–4096 characters without spaces or control characters`);
    }
    const disabled = bool("disabled");
    const mustChangePassword = bool("mustChangePassword");
    const oidcSubject = str("oidcSubject", false);
    if (oidcSubject !== undefined && (oidcSubject === "" || oidcSubject.length > 255 || CONTROL.test(oidcSubject))) {
      problems.push(`${at("oidcSubject")}: must be 1–255 characters without control characters`);
    }
    const email = str("email", false);
    if (email !== undefined && (email.length > 254 || !EMAIL.test(email))) {
      problems.push(`${at("email")}: must be an email address (got ${show(email)})`);
    }
    if (passwordHash === undefined && oidcSubject === undefined && email === undefined && entry.passwordHash === undefined) {
      problems.push(`users[${i}]: needs a passwordHash, an oidcSubject or an email, or nobody can sign in as ${show(username)}`);
    }

    const unique = (kind: keyof typeof seen, value: string | undefined, field: string) => {
      if (value === undefined) return;
      const key = kind === "email" ? value.toLowerCase() : value;
      const other = seen[kind].get(key);
      if (other !== undefined) problems.push(`${at(field)}: ${show(value)} is already used by users[${other}]`);
      else seen[kind].set(key, i);
    };
    unique("username", username, "username");
    unique("participantId", participantId, "participantId");
    unique("oidcSubject", oidcSubject, "oidcSubject");
    unique("email", email, "email");

    if (problems.length > before) return;
    const user: UserRecord = {
      username: username as string,
      displayName: displayName as string,
      role: role as Role,
      participantId: participantId as string,
    };
    if (passwordHash !== undefined) user.passwordHash = passwordHash;
    if (runtimeToken !== undefined) user.runtimeToken = runtimeToken;
    if (disabled !== undefined) user.disabled = disabled;
    if (mustChangePassword !== undefined) user.mustChangePassword = mustChangePassword;
    if (oidcSubject !== undefined) user.oidcSubject = oidcSubject;
    if (email !== undefined) user.email = email;
    users.push(user);
  });
  if (problems.length > 0) throw new UsersFileError(file, problems);
  return { version: 1, users };
}
