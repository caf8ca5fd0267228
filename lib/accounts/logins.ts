// Console sign-ins ("logins": not MACP sessions) and their store. Server-side.
//
// - Logins live in memory with an idle and an absolute expiry, and are kept
//   across restarts by an optional observer (login-file.ts) that writes them
//   to disk. The browser holds `<id>.<hmac>` (login-cookie.ts): a random
//   256-bit id and its HMAC-SHA256 under the secret, so forged or truncated
//   cookies are rejected before any lookup. The store is keyed by a SHA-256 of
//   the id, so what it persists never contains an id that could be replayed
//   as a cookie.
// - CSRF: see csrf.ts.
import { createHash, randomBytes } from "node:crypto";
import type { Role } from "@/lib/authz/roles";
import { MIN_SECRET_CHARS, loginKey, signLoginId, verifyLoginCookieValue } from "./login-cookie";

/** Who a login belongs to, as of sign-in. */
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

export interface LoginRecord {
  /** The raw login id (secret: it is what the cookie carries). Never persisted. */
  readonly id: string;
  /** loginKey(id): what the store is keyed by, and what is persisted. */
  readonly key: string;
  principal: Principal;
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** Absolute end of the login, whatever the activity. */
  readonly expiresAt: number;
  readonly ip?: string;
  readonly userAgent?: string;
  /**
   * Fingerprint of the credential used to sign in (password logins): when
   * the password hash in the users file changes — reset from the CLI, say —
   * logins made with the old one end.
   */
  credentialTag?: string;
}

/** A short, non-reversible fingerprint of a stored password hash. */
export function credentialTag(passwordHash: string): string {
  return createHash("sha256").update(passwordHash).digest("base64url").slice(0, 22);
}

// ------------------------------------------------------------------- store

/** Groups logins by account; OIDC-only users are keyed by subject so they never mix with users-file names. */
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

/** Longest client address kept with a login (the first X-Forwarded-For hop can be any text). */
export const MAX_IP_CHARS = 128;
/** Longest User-Agent kept with a login. */
export const MAX_USER_AGENT_CHARS = 256;

/**
 * A login as it is persisted: everything but the raw id, which only the
 * browser holds (`key` is its SHA-256).
 */
export interface StoredLogin {
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
 * What changed in the store: "change" for logins created, ended or updated
 * (persist soon), "touch" for a refreshed idle timer alone (persist lazily).
 */
export type LoginChange = "change" | "touch";

/** One sign-in that ended (signed out, expired, evicted, its account's logins ended) or changed (principal, credential). */
export interface LoginEvent {
  kind: "ended" | "updated";
  /** loginKey(id) of the login. */
  key: string;
}

export interface LoginStoreOptions {
  secret: Buffer;
  /** Sign out after this much inactivity. Default 8 hours. */
  idleMs?: number;
  /** Sign out this long after sign-in, whatever the activity. Default 24 hours. */
  absoluteMs?: number;
  /** Logins kept at most; the oldest are dropped first. Default 10 000. */
  maxLogins?: number;
  /** Logins per user at most; their oldest are dropped first. Default 20. */
  maxPerUser?: number;
  now?: () => number;
}

/** A login restored from disk: its raw id is learnt from the first cookie that presents it. */
const UNKNOWN_ID = "";

export class LoginStore {
  /** By loginKey(id), oldest first. */
  private readonly logins = new Map<string, LoginRecord>();
  private readonly secret: Buffer;
  readonly idleMs: number;
  readonly absoluteMs: number;
  private readonly maxLogins: number;
  private readonly maxPerUser: number;
  private readonly now: () => number;
  private ops = 0;
  private observer: ((change: LoginChange) => void) | null = null;
  private readonly listeners = new Set<(event: LoginEvent) => void>();

  constructor(options: LoginStoreOptions) {
    if (options.secret.length < MIN_SECRET_CHARS) throw new Error("session secret too short");
    this.secret = options.secret;
    this.idleMs = options.idleMs ?? 8 * 3_600_000;
    this.absoluteMs = options.absoluteMs ?? 24 * 3_600_000;
    this.maxLogins = options.maxLogins ?? 10_000;
    this.maxPerUser = options.maxPerUser ?? 20;
    this.now = options.now ?? Date.now;
  }

  /** Be told about every change (one observer: the login file). */
  observe(observer: ((change: LoginChange) => void) | null): void {
    this.observer = observer;
  }

  private changed(change: LoginChange): void {
    this.observer?.(change);
  }

  /**
   * Be told when a login ends or changes (open streams re-check their
   * sign-in on it). Any number of listeners; returns the unsubscribe.
   */
  onLoginEvent(listener: (event: LoginEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(kind: LoginEvent["kind"], key: string): void {
    for (const l of this.listeners) {
      try {
        l({ kind, key });
      } catch {
        // a listener's failure is its own business
      }
    }
  }

  /** Remove a login from the map and tell the listeners. */
  private drop(key: string): boolean {
    if (!this.logins.delete(key)) return false;
    this.emit("ended", key);
    return true;
  }

  /** Start a new login (always a fresh id: sign-in never reuses one). Returns the cookie value. */
  create(
    principal: Principal,
    meta: { ip?: string; userAgent?: string; credentialTag?: string } = {},
  ): { login: LoginRecord; cookieValue: string } {
    this.sweepSometimes();
    const now = this.now();
    const id = randomBytes(32).toString("base64url");
    const login: LoginRecord = {
      id,
      key: loginKey(id),
      principal,
      csrfToken: randomBytes(32).toString("base64url"),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + this.absoluteMs,
      ...(meta.ip !== undefined ? { ip: meta.ip.slice(0, MAX_IP_CHARS) } : {}),
      ...(meta.userAgent !== undefined ? { userAgent: meta.userAgent.slice(0, MAX_USER_AGENT_CHARS) } : {}),
      ...(meta.credentialTag !== undefined ? { credentialTag: meta.credentialTag } : {}),
    };
    this.logins.set(login.key, login);
    this.enforceLimits(ownerKey(principal));
    this.changed("change");
    return { login, cookieValue: signLoginId(this.secret, id) };
  }

  /** Drop the oldest logins beyond the per-user bound (for `owner`, or every owner) and the overall bound. */
  private enforceLimits(owner?: string): void {
    const byOwner = new Map<string, LoginRecord[]>();
    for (const s of this.logins.values()) {
      const k = ownerKey(s.principal);
      if (owner !== undefined && k !== owner) continue;
      let list = byOwner.get(k);
      if (!list) byOwner.set(k, (list = []));
      list.push(s);
    }
    for (const mine of byOwner.values()) {
      for (const old of mine.slice(0, Math.max(0, mine.length - this.maxPerUser))) this.drop(old.key);
    }
    while (this.logins.size > this.maxLogins) {
      const oldest = this.logins.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
  }

  /** The live login for a cookie value, refreshing its idle timer; undefined when unknown, forged or expired. */
  get(cookieValue: string | undefined): LoginRecord | undefined {
    if (cookieValue === undefined || cookieValue === "") return undefined;
    const sid = verifyLoginCookieValue(this.secret, cookieValue);
    if (sid === null) return undefined;
    const key = loginKey(sid);
    let login = this.logins.get(key);
    if (!login) return undefined;
    const now = this.now();
    if (this.expired(login, now)) {
      this.drop(key);
      this.changed("change");
      return undefined;
    }
    if (login.id === UNKNOWN_ID) {
      // Restored from disk and presented for the first time since: nobody
      // holds this object yet, so replace it (same place in the map).
      login = { ...login, id: sid };
      this.logins.set(key, login);
    }
    login.lastSeenAt = now;
    this.changed("touch");
    return login;
  }

  private expired(s: Pick<LoginRecord, "expiresAt" | "lastSeenAt">, now: number): boolean {
    return now >= s.expiresAt || now - s.lastSeenAt >= this.idleMs;
  }

  /** When the login ends if the user stays active. */
  endsAt(login: LoginRecord): number {
    return Math.min(login.expiresAt, login.lastSeenAt + this.idleMs);
  }

  /** Change who a login belongs to (users-file changes) or its credential fingerprint (own password change). */
  update(login: LoginRecord, changes: { principal?: Principal; credentialTag?: string }): void {
    let changed = false;
    if (changes.principal !== undefined && !samePrincipal(login.principal, changes.principal)) changed = true;
    if (changes.principal !== undefined) login.principal = changes.principal;
    if (changes.credentialTag !== undefined && changes.credentialTag !== login.credentialTag) {
      login.credentialTag = changes.credentialTag;
      changed = true;
    }
    if (changed && this.logins.get(login.key) === login) {
      this.changed("change");
      this.emit("updated", login.key);
    }
  }

  /**
   * The live login stored under `key` (loginKey of its id), without
   * refreshing its idle timer: for re-checking a sign-in that is already in
   * use (an open stream is not activity). Undefined when ended or expired.
   */
  peek(key: string): LoginRecord | undefined {
    const login = this.logins.get(key);
    if (!login) return undefined;
    if (this.expired(login, this.now())) {
      this.drop(key);
      this.changed("change");
      return undefined;
    }
    return login;
  }

  /** End a login (a record, or a raw login id). */
  destroy(login: LoginRecord | string): void {
    if (this.drop(typeof login === "string" ? loginKey(login) : login.key)) this.changed("change");
  }

  /** End every login of a users-file user (password change, disabled), optionally keeping one (by raw id). */
  destroyForUser(username: string, keepId?: string): number {
    const keep = keepId !== undefined ? loginKey(keepId) : undefined;
    let n = 0;
    for (const s of [...this.logins.values()]) {
      if (!s.principal.ephemeral && s.principal.username === username && s.key !== keep) {
        this.drop(s.key);
        n++;
      }
    }
    if (n > 0) this.changed("change");
    return n;
  }

  get size(): number {
    return this.logins.size;
  }

  sweep(): void {
    const now = this.now();
    let n = 0;
    for (const s of [...this.logins.values()]) {
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

  /** Every login as persisted (no raw ids), oldest first. */
  snapshot(): StoredLogin[] {
    return [...this.logins.values()].map((s) => ({
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
   * Add logins read back from disk (validated by the caller). Applies this
   * store's own rules: expired ones (idle, or absolute — including a shorter
   * BATON_SESSION_MAX_HOURS than when they were written) are dropped, and so
   * are the oldest beyond the per-user and overall bounds. Never extends a
   * login. Returns how many were kept.
   */
  restore(stored: readonly StoredLogin[]): number {
    const now = this.now();
    const sorted = [...stored].sort((a, b) => a.createdAt - b.createdAt);
    const before = this.logins.size;
    for (const s of sorted) {
      if (this.logins.has(s.key)) continue;
      const record: LoginRecord = {
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
      this.logins.set(record.key, record);
    }
    this.enforceLimits();
    return Math.max(0, this.logins.size - before);
  }
}
