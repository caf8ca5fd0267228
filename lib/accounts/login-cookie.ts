// The login cookie: the secret it is signed with, its signed value
// (`<id>.<hmac>`), and the Set-Cookie headers that set and clear it.
//
// - The secret (still named "session secret", as its variable and file are)
//   comes from BATON_SESSION_SECRET (≥ 32 characters) or is generated once
//   and kept in data/session-secret (mode 0600).
// - Cookie: HttpOnly; SameSite=Lax; Path=/; plus Secure (and the __Host-
//   name prefix) when the request is https or BATON_COOKIE_SECURE=1. The
//   names (baton_session, __Host-baton_session) are unchanged from when a
//   login was called a session, so signed-in browsers stay signed in.
import { batonDataDir } from "@/lib/data-dir";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { mkdir, open, readFile } from "node:fs/promises";
import path from "node:path";
import type { Env } from "./env";
import { headerValue, readCookie, type HeaderSource } from "./request";

export const DEFAULT_LOGIN_SECRET_FILE = "./data/session-secret";
export const LOGIN_COOKIE = "baton_session";
export const SECURE_LOGIN_COOKIE = "__Host-baton_session";

export const MIN_SECRET_CHARS = 32;

export interface SecretOptions {
  env?: Env;
  /** Where a generated secret is kept. Default $BATON_DATA_DIR/session-secret (./data/session-secret). */
  file?: string;
}

/** The HMAC key for login cookies (and the OIDC state cookie). */
export async function loadLoginSecret(options: SecretOptions = {}): Promise<Buffer> {
  const env = options.env ?? process.env;
  const fromEnv = env.BATON_SESSION_SECRET;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < MIN_SECRET_CHARS) {
      throw new Error(`BATON_SESSION_SECRET must be at least ${MIN_SECRET_CHARS} characters (for example: openssl rand -base64 48)`);
    }
    return Buffer.from(fromEnv, "utf8");
  }
  const file = path.resolve(options.file ?? path.join(batonDataDir(env), "session-secret"));
  const existing = await readSecretFile(file);
  if (existing) return existing;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const secret = randomBytes(48).toString("base64url");
  try {
    const fh = await open(file, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
    try {
      await fh.writeFile(`${secret}\n`, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    return Buffer.from(secret, "utf8");
  } catch (e) {
    // Another process created it between our read and our write: use theirs.
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      const theirs = await readSecretFile(file);
      if (theirs) return theirs;
    }
    throw e;
  }
}

async function readSecretFile(file: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new Error(`${file}: cannot read the session secret: ${(e as Error).message}`);
  }
  const secret = text.trim();
  if (secret.length < MIN_SECRET_CHARS) {
    throw new Error(`${file}: the session secret is shorter than ${MIN_SECRET_CHARS} characters; delete the file to generate a new one`);
  }
  return Buffer.from(secret, "utf8");
}

// ----------------------------------------------------------------- signing

const SID = /^[A-Za-z0-9_-]{43}$/;
const SIG = /^[A-Za-z0-9_-]{43}$/;

function mac(secret: Buffer, purpose: string, value: string): Buffer {
  return createHmac("sha256", secret).update(purpose).update("\u0000").update(value).digest();
}

export function signLoginId(secret: Buffer, sid: string): string {
  return `${sid}.${mac(secret, "session", sid).toString("base64url")}`;
}

/** The store's key for a login id: SHA-256, base64url (43 characters). Ids are 256-bit random, so no salt is needed. */
export function loginKey(sid: string): string {
  return createHash("sha256").update(sid).digest("base64url");
}

/** The login id inside a cookie value, or null when malformed or not signed with `secret`. */
export function verifyLoginCookieValue(secret: Buffer, value: string): string | null {
  const dot = value.indexOf(".");
  if (dot < 0) return null;
  const sid = value.slice(0, dot);
  const sig = value.slice(dot + 1);
  if (!SID.test(sid) || !SIG.test(sig)) return null;
  // Compared as text, not decoded: the last character of a 43-character
  // base64url MAC carries 2 unused bits, so four different strings decode to
  // the same bytes; only the one encoding the console issued is accepted.
  const expected = Buffer.from(mac(secret, "session", sid).toString("base64url"));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return sid;
}

/** The login cookie's value from a request, preferring the __Host- name. */
export function readLoginCookie(headers: HeaderSource): string | undefined {
  const cookie = headerValue(headers, "cookie");
  return readCookie(cookie, SECURE_LOGIN_COOKIE) ?? readCookie(cookie, LOGIN_COOKIE);
}

function cookieString(name: string, value: string, attrs: string[]): string {
  return [`${name}=${value}`, ...attrs].join("; ");
}

/** Set-Cookie for a new login. */
export function loginCookie(cookieValue: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  const attrs = ["Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`];
  if (options.secure) attrs.push("Secure");
  return cookieString(options.secure ? SECURE_LOGIN_COOKIE : LOGIN_COOKIE, cookieValue, attrs);
}

/** Set-Cookie headers that remove the login cookie (both names). */
export function clearLoginCookies(options: { secure: boolean }): string[] {
  const out = [cookieString(LOGIN_COOKIE, "", ["Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", ...(options.secure ? ["Secure"] : [])])];
  if (options.secure) out.push(cookieString(SECURE_LOGIN_COOKIE, "", ["Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", "Secure"]));
  return out;
}
