// Console sign-in sessions, their cookie, and CSRF protection. Server-side.
//
// - Sessions live in memory with an idle and an absolute expiry, and are kept
//   across restarts by an optional observer (session-file.ts) that writes them
//   to disk. The browser holds `<sid>.<hmac>`: a random 256-bit id and its
//   HMAC-SHA256 under the session secret, so forged or truncated cookies are
//   rejected before any lookup. The store is keyed by a SHA-256 of the id, so
//   what it persists never contains an id that could be replayed as a cookie.
// - The secret comes from BATON_SESSION_SECRET (≥ 32 characters) or is
//   generated once and kept in data/session-secret (mode 0600).
// - Cookie: HttpOnly; SameSite=Lax; Path=/; plus Secure (and the __Host-
//   name prefix) when the request is https or BATON_COOKIE_SECURE=1.
// - CSRF: every session has a synchronizer token that the browser learns from
//   "whoami" and sends back as `x-baton-csrf` on each state-changing request;
//   in addition Origin / Sec-Fetch-Site must say the request came from the
//   console itself.
import { batonDataDir } from "@/lib/data-dir";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { mkdir, open, readFile } from "node:fs/promises";
import path from "node:path";
import type { Env } from "./env";
import type { Role } from "@/lib/authz/roles";

export const DEFAULT_SESSION_SECRET_FILE = "./data/session-secret";
export const SESSION_COOKIE = "baton_session";
export const SECURE_SESSION_COOKIE = "__Host-baton_session";
export const CSRF_HEADER = "x-baton-csrf";

/** Who a session belongs to, as of sign-in. */
export interface Principal {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  authMethod: "password" | "oidc";
  /** OIDC subject, for OIDC sign-ins. */
  oidcSubject?: string;
  /**
   * True for OIDC users with no users-file entry: their role and identity
   * come from the sign-in itself. Otherwise the users file is re-read on each
   * request, so role changes and disabling take effect immediately.
   */
  ephemeral: boolean;
}

export interface SessionRecord {
  /** The raw session id (secret: it is what the cookie carries). Never persisted. */
  readonly id: string;
  /** sessionKey(id): what the store is keyed by, and what is persisted. */
  readonly key: string;
  principal: Principal;
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** Absolute end of the session, whatever the activity. */
  readonly expiresAt: number;
  readonly ip?: string;
  readonly userAgent?: string;
  /**
   * Fingerprint of the credential used to sign in (password sessions): when
   * the password hash in the users file changes — reset from the CLI, say —
   * sessions made with the old one end.
   */
  credentialTag?: string;
}

// ------------------------------------------------------------------ secret

const MIN_SECRET_CHARS = 32;

export interface SecretOptions {
  env?: Env;
  /** Where a generated secret is kept. Default $BATON_DATA_DIR/session-secret (./data/session-secret). */
  file?: string;
}

/** The HMAC key for session cookies (and the OIDC state cookie). */
export async function loadSessionSecret(options: SecretOptions = {}): Promise<Buffer> {
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

/** A short, non-reversible fingerprint of a stored password hash. */
export function credentialTag(passwordHash: string): string {
  return createHash("sha256").update(passwordHash).digest("base64url").slice(0, 22);
}

const SID = /^[A-Za-z0-9_-]{43}$/;
const SIG = /^[A-Za-z0-9_-]{43}$/;

function mac(secret: Buffer, purpose: string, value: string): Buffer {
  return createHmac("sha256", secret).update(purpose).update("\u0000").update(value).digest();
}

export function signSessionId(secret: Buffer, sid: string): string {
  return `${sid}.${mac(secret, "session", sid).toString("base64url")}`;
}

/** The store's key for a session id: SHA-256, base64url (43 characters). Ids are 256-bit random, so no salt is needed. */
export function sessionKey(sid: string): string {
  return createHash("sha256").update(sid).digest("base64url");
}

/** The session id inside a cookie value, or null when malformed or not signed with `secret`. */
export function verifySessionCookieValue(secret: Buffer, value: string): string | null {
  const dot = value.indexOf(".");
  if (dot < 0) return null;
  const sid = value.slice(0, dot);
  const sig = value.slice(dot + 1);
  if (!SID.test(sid) || !SIG.test(sig)) return null;
  const expected = mac(secret, "session", sid);
  const given = Buffer.from(sig, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return sid;
}

// ------------------------------------------------------------------- store

/** Groups sessions by account; OIDC-only users are keyed by subject so they never mix with users-file names. */
function ownerKey(p: Principal): string {
  return p.ephemeral ? `oidc\u0000${p.oidcSubject ?? p.username}` : `user\u0000${p.username}`;
}

function samePrincipal(a: Principal, b: Principal): boolean {
  return (
    a.username === b.username &&
    a.displayName === b.displayName &&
    a.role === b.role &&
    a.participantId === b.participantId &&
    a.authMethod === b.authMethod &&
    a.oidcSubject === b.oidcSubject &&
    a.ephemeral === b.ephemeral
  );
}

/** Longest client address kept with a session (the first X-Forwarded-For hop can be any text). */
export const MAX_IP_CHARS = 128;
/** Longest User-Agent kept with a session. */
export const MAX_USER_AGENT_CHARS = 256;

/**
 * A session as it is persisted: everything but the raw id, which only the
 * browser holds (`key` is its SHA-256).
 */
export interface StoredSession {
  key: string;
  principal: Principal;
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  ip?: string;
  userAgent?: string;
  credentialTag?: string;
}

/**
 * What changed in the store: "change" for sessions created, ended or updated
 * (persist soon), "touch" for a refreshed idle timer alone (persist lazily).
 */
export type SessionChange = "change" | "touch";

/** One sign-in that ended (signed out, expired, evicted, its account's sessions ended) or changed (principal, credential). */
export interface SessionEvent {
  kind: "ended" | "updated";
  /** sessionKey(id) of the session. */
  key: string;
}

export interface SessionStoreOptions {
  secret: Buffer;
  /** Sign out after this much inactivity. Default 8 hours. */
  idleMs?: number;
  /** Sign out this long after sign-in, whatever the activity. Default 24 hours. */
  absoluteMs?: number;
  /** Sessions kept at most; the oldest are dropped first. Default 10 000. */
  maxSessions?: number;
  /** Sessions per user at most; their oldest are dropped first. Default 20. */
  maxPerUser?: number;
  now?: () => number;
}

/** A session restored from disk: its raw id is learnt from the first cookie that presents it. */
const UNKNOWN_ID = "";

export class SessionStore {
  /** By sessionKey(id), oldest first. */
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly secret: Buffer;
  readonly idleMs: number;
  readonly absoluteMs: number;
  private readonly maxSessions: number;
  private readonly maxPerUser: number;
  private readonly now: () => number;
  private ops = 0;
  private observer: ((change: SessionChange) => void) | null = null;
  private readonly listeners = new Set<(event: SessionEvent) => void>();

  constructor(options: SessionStoreOptions) {
    if (options.secret.length < MIN_SECRET_CHARS) throw new Error("session secret too short");
    this.secret = options.secret;
    this.idleMs = options.idleMs ?? 8 * 3_600_000;
    this.absoluteMs = options.absoluteMs ?? 24 * 3_600_000;
    this.maxSessions = options.maxSessions ?? 10_000;
    this.maxPerUser = options.maxPerUser ?? 20;
    this.now = options.now ?? Date.now;
  }

  /** Be told about every change (one observer: the session file). */
  observe(observer: ((change: SessionChange) => void) | null): void {
    this.observer = observer;
  }

  private changed(change: SessionChange): void {
    this.observer?.(change);
  }

  /**
   * Be told when a session ends or changes (open streams re-check their
   * sign-in on it). Any number of listeners; returns the unsubscribe.
   */
  onSessionEvent(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(kind: SessionEvent["kind"], key: string): void {
    for (const l of this.listeners) {
      try {
        l({ kind, key });
      } catch {
        // a listener's failure is its own business
      }
    }
  }

  /** Remove a session from the map and tell the listeners. */
  private drop(key: string): boolean {
    if (!this.sessions.delete(key)) return false;
    this.emit("ended", key);
    return true;
  }

  /** Start a new session (always a fresh id: sign-in never reuses one). Returns the cookie value. */
  create(
    principal: Principal,
    meta: { ip?: string; userAgent?: string; credentialTag?: string } = {},
  ): { session: SessionRecord; cookieValue: string } {
    this.sweepSometimes();
    const now = this.now();
    const id = randomBytes(32).toString("base64url");
    const session: SessionRecord = {
      id,
      key: sessionKey(id),
      principal,
      csrfToken: randomBytes(32).toString("base64url"),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + this.absoluteMs,
      ...(meta.ip !== undefined ? { ip: meta.ip.slice(0, MAX_IP_CHARS) } : {}),
      ...(meta.userAgent !== undefined ? { userAgent: meta.userAgent.slice(0, MAX_USER_AGENT_CHARS) } : {}),
      ...(meta.credentialTag !== undefined ? { credentialTag: meta.credentialTag } : {}),
    };
    this.sessions.set(session.key, session);
    this.enforceLimits(ownerKey(principal));
    this.changed("change");
    return { session, cookieValue: signSessionId(this.secret, id) };
  }

  /** Drop the oldest sessions beyond the per-user bound (for `owner`, or every owner) and the overall bound. */
  private enforceLimits(owner?: string): void {
    const byOwner = new Map<string, SessionRecord[]>();
    for (const s of this.sessions.values()) {
      const k = ownerKey(s.principal);
      if (owner !== undefined && k !== owner) continue;
      let list = byOwner.get(k);
      if (!list) byOwner.set(k, (list = []));
      list.push(s);
    }
    for (const mine of byOwner.values()) {
      for (const old of mine.slice(0, Math.max(0, mine.length - this.maxPerUser))) this.drop(old.key);
    }
    while (this.sessions.size > this.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
  }

  /** The live session for a cookie value, refreshing its idle timer; undefined when unknown, forged or expired. */
  get(cookieValue: string | undefined): SessionRecord | undefined {
    if (cookieValue === undefined || cookieValue === "") return undefined;
    const sid = verifySessionCookieValue(this.secret, cookieValue);
    if (sid === null) return undefined;
    const key = sessionKey(sid);
    let session = this.sessions.get(key);
    if (!session) return undefined;
    const now = this.now();
    if (this.expired(session, now)) {
      this.drop(key);
      this.changed("change");
      return undefined;
    }
    if (session.id === UNKNOWN_ID) {
      // Restored from disk and presented for the first time since: nobody
      // holds this object yet, so replace it (same place in the map).
      session = { ...session, id: sid };
      this.sessions.set(key, session);
    }
    session.lastSeenAt = now;
    this.changed("touch");
    return session;
  }

  private expired(s: Pick<SessionRecord, "expiresAt" | "lastSeenAt">, now: number): boolean {
    return now >= s.expiresAt || now - s.lastSeenAt >= this.idleMs;
  }

  /** When the session ends if the user stays active. */
  endsAt(session: SessionRecord): number {
    return Math.min(session.expiresAt, session.lastSeenAt + this.idleMs);
  }

  /** Change who a session belongs to (users-file changes) or its credential fingerprint (own password change). */
  update(session: SessionRecord, changes: { principal?: Principal; credentialTag?: string }): void {
    let changed = false;
    if (changes.principal !== undefined && !samePrincipal(session.principal, changes.principal)) changed = true;
    if (changes.principal !== undefined) session.principal = changes.principal;
    if (changes.credentialTag !== undefined && changes.credentialTag !== session.credentialTag) {
      session.credentialTag = changes.credentialTag;
      changed = true;
    }
    if (changed && this.sessions.get(session.key) === session) {
      this.changed("change");
      this.emit("updated", session.key);
    }
  }

  /**
   * The live session stored under `key` (sessionKey of its id), without
   * refreshing its idle timer: for re-checking a sign-in that is already in
   * use (an open stream is not activity). Undefined when ended or expired.
   */
  peek(key: string): SessionRecord | undefined {
    const session = this.sessions.get(key);
    if (!session) return undefined;
    if (this.expired(session, this.now())) {
      this.drop(key);
      this.changed("change");
      return undefined;
    }
    return session;
  }

  /** End a session (a record, or a raw session id). */
  destroy(session: SessionRecord | string): void {
    if (this.drop(typeof session === "string" ? sessionKey(session) : session.key)) this.changed("change");
  }

  /** End every session of a users-file user (password change, disabled), optionally keeping one (by raw id). */
  destroyForUser(username: string, keepId?: string): number {
    const keep = keepId !== undefined ? sessionKey(keepId) : undefined;
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (!s.principal.ephemeral && s.principal.username === username && s.key !== keep) {
        this.drop(s.key);
        n++;
      }
    }
    if (n > 0) this.changed("change");
    return n;
  }

  get size(): number {
    return this.sessions.size;
  }

  sweep(): void {
    const now = this.now();
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (this.expired(s, now)) {
        this.drop(s.key);
        n++;
      }
    }
    if (n > 0) this.changed("change");
  }

  private sweepSometimes(): void {
    if (++this.ops % 64 === 0) this.sweep();
  }

  /** Every session as persisted (no raw ids), oldest first. */
  snapshot(): StoredSession[] {
    return [...this.sessions.values()].map((s) => ({
      key: s.key,
      principal: { ...s.principal },
      csrfToken: s.csrfToken,
      createdAt: s.createdAt,
      lastSeenAt: s.lastSeenAt,
      expiresAt: s.expiresAt,
      ...(s.ip !== undefined ? { ip: s.ip } : {}),
      ...(s.userAgent !== undefined ? { userAgent: s.userAgent } : {}),
      ...(s.credentialTag !== undefined ? { credentialTag: s.credentialTag } : {}),
    }));
  }

  /**
   * Add sessions read back from disk (validated by the caller). Applies this
   * store's own rules: expired ones (idle, or absolute — including a shorter
   * BATON_SESSION_MAX_HOURS than when they were written) are dropped, and so
   * are the oldest beyond the per-user and overall bounds. Never extends a
   * session. Returns how many were kept.
   */
  restore(stored: readonly StoredSession[]): number {
    const now = this.now();
    const sorted = [...stored].sort((a, b) => a.createdAt - b.createdAt);
    const before = this.sessions.size;
    for (const s of sorted) {
      if (this.sessions.has(s.key)) continue;
      const record: SessionRecord = {
        id: UNKNOWN_ID,
        key: s.key,
        principal: { ...s.principal },
        csrfToken: s.csrfToken,
        createdAt: s.createdAt,
        // A clock that went back must not stretch the idle timer.
        lastSeenAt: Math.min(s.lastSeenAt, now),
        expiresAt: Math.min(s.expiresAt, s.createdAt + this.absoluteMs),
        ...(s.ip !== undefined ? { ip: s.ip.slice(0, MAX_IP_CHARS) } : {}),
        ...(s.userAgent !== undefined ? { userAgent: s.userAgent.slice(0, MAX_USER_AGENT_CHARS) } : {}),
        ...(s.credentialTag !== undefined ? { credentialTag: s.credentialTag } : {}),
      };
      if (this.expired(record, now)) continue;
      this.sessions.set(record.key, record);
    }
    this.enforceLimits();
    return Math.max(0, this.sessions.size - before);
  }
}

// ----------------------------------------------------------------- headers

/** Node's IncomingHttpHeaders, a fetch Headers, or a plain map. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const map = headers as Record<string, string | string[] | undefined>;
  const v = map[name.toLowerCase()];
  return Array.isArray(v) ? v.join(", ") : v;
}

/** Value of a cookie in a Cookie header. */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The session cookie's value from a request, preferring the __Host- name. */
export function readSessionCookie(headers: HeaderSource): string | undefined {
  const cookie = headerValue(headers, "cookie");
  return readCookie(cookie, SECURE_SESSION_COOKIE) ?? readCookie(cookie, SESSION_COOKIE);
}

export interface RequestLike {
  headers: HeaderSource;
  /** true for TLS connections (e.g. `req.socket.encrypted` in Node). */
  encrypted?: boolean;
  /** Full request URL if known (fetch Request.url). */
  url?: string;
}

/**
 * Whether cookies for this request get `Secure`: TLS, BATON_COOKIE_SECURE=1,
 * or `x-forwarded-proto: https` behind a trusted proxy (BATON_TRUST_PROXY=1).
 */
export function isSecureRequest(req: RequestLike, env: Env = process.env): boolean {
  if (env.BATON_COOKIE_SECURE === "1") return true;
  if (req.encrypted === true) return true;
  if (req.url?.startsWith("https://")) return true;
  if (env.BATON_TRUST_PROXY === "1") {
    const proto = headerValue(req.headers, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if (proto === "https") return true;
  }
  return false;
}

function cookieString(name: string, value: string, attrs: string[]): string {
  return [`${name}=${value}`, ...attrs].join("; ");
}

/** Set-Cookie for a new session. */
export function sessionCookie(cookieValue: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  const attrs = ["Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`];
  if (options.secure) attrs.push("Secure");
  return cookieString(options.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, cookieValue, attrs);
}

/** Set-Cookie headers that remove the session cookie (both names). */
export function clearSessionCookies(options: { secure: boolean }): string[] {
  const out = [cookieString(SESSION_COOKIE, "", ["Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", ...(options.secure ? ["Secure"] : [])])];
  if (options.secure) out.push(cookieString(SECURE_SESSION_COOKIE, "", ["Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", "Secure"]));
  return out;
}

// -------------------------------------------------------------------- CSRF

export type CsrfResult = { ok: true } | { ok: false; reason: string };

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

export function isSafeMethod(method: string | undefined): boolean {
  return method !== undefined && SAFE_METHODS.has(method.toUpperCase());
}

/** Normalize an origin ("https://Baton.example:443" → "https://baton.example"); null when not an http(s) origin. */
export function normalizeOrigin(value: string): string | null {
  try {
    const u = new URL(value);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return u.origin;
  } catch {
    return null;
  }
}

/**
 * Does the request come from one of the console's own pages? Checks
 * Sec-Fetch-Site (modern browsers) and Origin; requests with neither (old
 * browsers, non-browser clients) pass here and rely on the token check.
 * Use it alone for sign-in, where there is no session yet.
 */
export function checkOrigin(headers: HeaderSource, allowedOrigins: readonly string[]): CsrfResult {
  const site = headerValue(headers, "sec-fetch-site")?.trim().toLowerCase();
  if (site !== undefined && site !== "same-origin") {
    return { ok: false, reason: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  }
  const origin = headerValue(headers, "origin");
  if (origin !== undefined) {
    const normalized = origin.trim() === "null" ? null : normalizeOrigin(origin.trim());
    if (normalized === null) return { ok: false, reason: "request refused: its Origin header is opaque or malformed" };
    const allowed = allowedOrigins.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== null);
    if (!allowed.includes(normalized)) return { ok: false, reason: `request refused: origin ${normalized} is not this console` };
  }
  return { ok: true };
}

/**
 * CSRF check for a state-changing request made with a session cookie:
 * same-origin (see `checkOrigin`) and the session's token in `x-baton-csrf`.
 * Safe methods (GET, HEAD, OPTIONS) pass; never change state on them.
 */
export function checkCsrf(
  request: { method?: string; headers: HeaderSource },
  session: Pick<SessionRecord, "csrfToken"> | undefined,
  options: { allowedOrigins: readonly string[] },
): CsrfResult {
  if (isSafeMethod(request.method)) return { ok: true };
  const origin = checkOrigin(request.headers, options.allowedOrigins);
  if (!origin.ok) return origin;
  if (!session) return { ok: false, reason: "not signed in" };
  const token = headerValue(request.headers, CSRF_HEADER);
  if (token === undefined || token === "") return { ok: false, reason: `missing ${CSRF_HEADER} header` };
  const a = Buffer.from(token, "utf8");
  const b = Buffer.from(session.csrfToken, "utf8");
  if (a.length !== b.length || !timingSafeEqual(a, b)) return { ok: false, reason: `wrong ${CSRF_HEADER} token (sign in again if this persists)` };
  return { ok: true };
}

/**
 * The console's own origin(s) for Origin checks: BATON_PUBLIC_ORIGIN (comma
 * separated) if set, else the request's Host with http/https per `secure`.
 */
export function allowedOriginsFor(req: RequestLike, env: Env = process.env): string[] {
  const configured = env.BATON_PUBLIC_ORIGIN?.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (configured && configured.length > 0) return configured;
  const host = headerValue(req.headers, "host")?.trim();
  if (!host) return [];
  return [`${isSecureRequest(req, env) ? "https" : "http"}://${host}`];
}
