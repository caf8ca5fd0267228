// Caller identity (PROTOCOL.md §9). Two configurations:
// - token mode: MACP_AUTH_TOKENS_JSON / MACP_AUTH_TOKENS_FILE map opaque bearer
//   tokens to identities with capability flags; the legacy x-macp-agent-id
//   header is refused.
// - dev mode (MACP_ALLOW_INSECURE=1 and no token configuration): the bearer
//   value (Python SDK), x-macp-token, or x-macp-agent-id (TypeScript SDK)
//   names the caller directly.
import fs from "node:fs";
import { ConfigError } from "./config";

export interface Identity {
  sender: string;
  canStartSessions: boolean;
  /** Empty means every mode. */
  allowedModes: readonly string[];
  maxOpenSessions?: number;
  canManageRegistry: boolean;
  /** May watch and subscribe to any session; may never send. */
  isObserver: boolean;
  /**
   * Concurrent streaming subscriptions this identity may hold (0: unlimited);
   * unset: MACP_MAX_SUBSCRIPTIONS, or MACP_OBSERVER_MAX_SUBSCRIPTIONS for observers.
   */
  maxSubscriptions?: number;
}

export interface AuthResolver {
  readonly mode: "dev" | "tokens";
  /** null when the request carries no usable credential. */
  resolve(headers: Headers): Identity | null;
  describe(): string;
  /** Why resolve() refused credentials it understood (a reserved identity), or null. */
  explain?(headers: Headers): string | null;
}

const MAX_ID_LENGTH = 512;

function bearer(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth !== null) {
    if (!auth.startsWith("Bearer ")) return null;
    const v = auth.slice("Bearer ".length).trim();
    return v === "" ? null : v;
  }
  const t = headers.get("x-macp-token");
  if (t !== null && t.trim() !== "") return t.trim();
  return null;
}

function validId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_ID_LENGTH && !/[\s\u0000-\u001f]/.test(id);
}

export function devResolver(observers: readonly string[]): AuthResolver {
  const observerSet = new Set(observers);
  return {
    mode: "dev",
    resolve(headers) {
      const id = bearer(headers) ?? headers.get("x-macp-agent-id")?.trim() ?? null;
      if (id === null || !validId(id)) return null;
      const observer = observerSet.has(id);
      return {
        sender: id,
        canStartSessions: !observer,
        allowedModes: [],
        canManageRegistry: !observer,
        isObserver: observer,
      };
    },
    describe: () =>
      `dev (insecure): Authorization: Bearer <id> or x-macp-agent-id: <id> names the caller` +
      (observerSet.size ? `; observers: ${[...observerSet].join(", ")}` : ""),
  };
}

interface TokenEntry {
  token: string;
  identity: Identity;
}

function parseTokenEntries(raw: unknown, source: string): TokenEntry[] {
  const list = Array.isArray(raw)
    ? raw
    : raw && typeof raw === "object" && Array.isArray((raw as { tokens?: unknown }).tokens)
      ? (raw as { tokens: unknown[] }).tokens
      : null;
  if (!list) throw new ConfigError(`${source}: expected a JSON list or {"tokens":[...]}`);
  const seen = new Set<string>();
  return list.map((e, i) => {
    const where = `${source}: entry ${i}`;
    if (!e || typeof e !== "object") throw new ConfigError(`${where} is not an object`);
    const o = e as Record<string, unknown>;
    const str = (k: string): string => {
      const v = o[k];
      if (typeof v !== "string" || v.trim() === "") throw new ConfigError(`${where}: "${k}" must be a non-empty string`);
      return v;
    };
    const bool = (k: string, d: boolean): boolean => {
      const v = o[k];
      if (v === undefined) return d;
      if (typeof v !== "boolean") throw new ConfigError(`${where}: "${k}" must be a boolean`);
      return v;
    };
    const token = str("token");
    const sender = str("sender");
    if (token.includes(".")) throw new ConfigError(`${where}: static tokens must not contain "." (reserved for JWTs)`);
    if (seen.has(token)) throw new ConfigError(`${where}: duplicate token`);
    seen.add(token);
    const modes = o.allowed_modes ?? [];
    if (!Array.isArray(modes) || !modes.every((m) => typeof m === "string")) {
      throw new ConfigError(`${where}: "allowed_modes" must be a list of strings`);
    }
    const max = o.max_open_sessions;
    if (max !== undefined && max !== null && !(Number.isInteger(max) && (max as number) >= 0)) {
      throw new ConfigError(`${where}: "max_open_sessions" must be a non-negative integer`);
    }
    const maxSubs = o.max_subscriptions;
    if (maxSubs !== undefined && maxSubs !== null && !(Number.isInteger(maxSubs) && (maxSubs as number) >= 0)) {
      throw new ConfigError(`${where}: "max_subscriptions" must be a non-negative integer (0: unlimited)`);
    }
    return {
      token,
      identity: {
        sender,
        canStartSessions: bool("can_start_sessions", true),
        allowedModes: modes as string[],
        maxOpenSessions: typeof max === "number" ? max : undefined,
        canManageRegistry: bool("can_manage_mode_registry", false),
        isObserver: bool("is_observer", false),
        ...(typeof maxSubs === "number" ? { maxSubscriptions: maxSubs } : {}),
      },
    };
  });
}

export function tokenResolver(entries: TokenEntry[]): AuthResolver {
  const map = new Map(entries.map((e) => [e.token, e.identity]));
  return {
    mode: "tokens",
    resolve(headers) {
      const t = bearer(headers);
      if (t === null) return null;
      return map.get(t) ?? null;
    },
    describe: () => `static bearer tokens (${map.size} identities)`,
  };
}

export function createAuthResolver(cfg: {
  authTokensJson?: string;
  authTokensFile?: string;
  allowInsecure: boolean;
  devObservers: readonly string[];
}): AuthResolver {
  if (cfg.authTokensJson || cfg.authTokensFile) {
    const entries: TokenEntry[] = [];
    if (cfg.authTokensJson) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(cfg.authTokensJson);
      } catch (e) {
        throw new ConfigError(`MACP_AUTH_TOKENS_JSON is not valid JSON: ${(e as Error).message}`);
      }
      entries.push(...parseTokenEntries(parsed, "MACP_AUTH_TOKENS_JSON"));
    }
    if (cfg.authTokensFile) {
      let text: string;
      try {
        text = fs.readFileSync(cfg.authTokensFile, "utf8");
      } catch (e) {
        throw new ConfigError(`MACP_AUTH_TOKENS_FILE cannot be read: ${(e as Error).message}`);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new ConfigError(`MACP_AUTH_TOKENS_FILE is not valid JSON: ${(e as Error).message}`);
      }
      entries.push(...parseTokenEntries(parsed, cfg.authTokensFile));
    }
    return tokenResolver(entries);
  }
  if (!cfg.allowInsecure) {
    throw new ConfigError("no authentication configured: set MACP_AUTH_TOKENS_JSON/FILE, or MACP_ALLOW_INSECURE=1 for dev mode");
  }
  return devResolver(cfg.devObservers);
}

// ------------------------------------------------------------ reservations

/**
 * Identities that only one trusted caller may act as, even in dev mode: the
 * people of a Baton console embedding this runtime. Dev headers naming them
 * are refused; the console presents each person with a delegate credential
 * it alone can make (a per-boot secret that never leaves its process).
 */
export interface ReservedIdentities {
  /** Is `sender` reserved (only a delegate credential may act as it)? */
  isReserved(sender: string): boolean;
  /** The identity a delegate credential stands for, or null when `credential` is not a valid one. */
  delegated(credential: string): string | null;
  /** Told about each refused dev credential (for a rate-limited log line). */
  onRefused?(sender: string): void;
  describe(): string;
}

function devIdentity(sender: string): Identity {
  return { sender, canStartSessions: true, allowedModes: [], canManageRegistry: true, isObserver: false };
}

/**
 * Dev auth with reserved identities: a delegate credential resolves to its
 * identity; any other credential that would name a reserved identity is
 * refused (UNAUTHENTICATED, with explain() saying why). Agents are unaffected:
 * `authorization: Bearer <agent-id>` (Python SDK) and `x-macp-agent-id:
 * <agent-id>` (TypeScript SDK) work as before for every other id.
 */
export function withReservedIdentities(base: AuthResolver, reserved: ReservedIdentities): AuthResolver {
  const refusedSender = (headers: Headers): string | null => {
    const id = base.resolve(headers);
    return id !== null && reserved.isReserved(id.sender) ? id.sender : null;
  };
  return {
    mode: base.mode,
    resolve(headers) {
      const credential = bearer(headers);
      if (credential !== null) {
        const delegated = reserved.delegated(credential);
        if (delegated !== null) return devIdentity(delegated);
      }
      const id = base.resolve(headers);
      if (id !== null && reserved.isReserved(id.sender)) {
        reserved.onRefused?.(id.sender);
        return null;
      }
      return id;
    },
    explain(headers) {
      const sender = refusedSender(headers);
      return sender === null
        ? null
        : `${sender} is a person of the Baton console: only the console acts for them (sign in to the console as them)`;
    },
    describe: () => `${base.describe()}; ${reserved.describe()}`,
  };
}
