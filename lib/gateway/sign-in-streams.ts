// Browser streams follow the sign-in they were opened with. Every server
// stream of the console's Connect services (session events, the session
// list, the inbox, the demo runner, and any added later) passes through one
// Connect interceptor installed on the whole router, so the rule does not
// depend on how each stream is built:
//
// - a stream opened by a signed-in person is registered with the login it
//   was opened under;
// - when that sign-in ends (sign-out, another sign-in replacing it, account
//   disabled or removed, password changed elsewhere, login expired) the
//   stream ends at once with UNAUTHENTICATED;
// - when the account changes (role, participant id, username) the stream ends
//   with ABORTED, which browsers treat as "reconnect": the new stream is
//   checked, and served, under the new role;
// - what triggers a re-check: the account service's change events
//   (Accounts.onSignInChange: this process's sign-ins, and the users file,
//   polled every second, for edits by `npm run users` or by hand), plus a
//   periodic re-check of every open stream as a backstop (expiry, anything
//   missed). Re-checks never count as activity, so an open tab does not keep
//   an idle sign-in alive.
//
// Streams opened without a sign-in (reads open to anyone,
// BATON_REQUIRE_SIGN_IN=0) are not watched: there is nothing to revoke.
import { Code, ConnectError, type Interceptor, type StreamResponse } from "@connectrpc/connect";
import type { Accounts, Authenticated, SignInChange } from "@/lib/accounts/accounts";
import { silentLogger, type GatewayLogger } from "./logger";
import { kSignedIn, NOT_SIGNED_IN } from "./request-auth";

export interface SignInStreamsOptions {
  accounts: Accounts;
  /** Backstop re-check of every open stream. Default 10 s. */
  recheckMs?: number;
  logger?: GatewayLogger;
}

/** Why a watched stream was ended. */
export type StreamEnd = { kind: "signed-out" } | { kind: "account-changed"; detail: string };

interface Watched {
  auth: Authenticated;
  end(reason: StreamEnd): void;
  /** A re-check is running; `again` asks for one more after it. */
  checking: boolean;
  again: boolean;
}

export const ACCOUNT_CHANGED = "Your account changed; the stream starts again with your new access.";

/** The error a watched stream ends with. Browsers re-check their sign-in on both. */
export function streamEndError(reason: StreamEnd): ConnectError {
  if (reason.kind === "signed-out") return new ConnectError(NOT_SIGNED_IN, Code.Unauthenticated, { "x-baton-reauth": "signed-out" });
  return new ConnectError(`${ACCOUNT_CHANGED} (${reason.detail})`, Code.Aborted, { "x-baton-reauth": "account-changed" });
}

function accountChange(before: Authenticated, after: Authenticated): string | null {
  const a = before.user;
  const b = after.user;
  const changes: string[] = [];
  if (a.role !== b.role) changes.push(`role ${a.role} → ${b.role}`);
  if (a.participantId !== b.participantId) changes.push(`participant ${a.participantId} → ${b.participantId}`);
  if (a.username !== b.username) changes.push(`username ${a.username} → ${b.username}`);
  return changes.length > 0 ? changes.join(", ") : null;
}

export class SignInStreams {
  private readonly accounts: Accounts;
  private readonly logger: GatewayLogger;
  private readonly recheckMs: number;
  /** By login key. */
  private readonly byLogin = new Map<string, Set<Watched>>();
  private unsubscribe: (() => void) | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(options: SignInStreamsOptions) {
    this.accounts = options.accounts;
    this.logger = options.logger ?? silentLogger;
    this.recheckMs = options.recheckMs ?? 10_000;
  }

  /** Open streams being watched (for tests and stats). */
  get size(): number {
    let n = 0;
    for (const set of this.byLogin.values()) n += set.size;
    return n;
  }

  /**
   * The interceptor to install on the console's Connect router (every
   * service), inside the access interceptor (request-auth.ts): a stream
   * follows the sign-in that interceptor checked, or, for streams open to
   * anyone, the sign-in its request carries, if any.
   */
  interceptor(): Interceptor {
    return (next) => async (req) => {
      const res = await next(req);
      if (!res.stream || this.closed) return res;
      const auth = req.contextValues.get(kSignedIn) ?? (await this.accounts.authenticate(req.header));
      if (!auth) return res;
      const message = this.follow(auth, res.message, req.signal);
      return { ...res, message } as StreamResponse;
    };
  }

  /**
   * Pass `source` through until it ends, the call is aborted, or the sign-in
   * `auth` ends or changes; then end with the matching error. The source's
   * own cleanup runs when the call's context is aborted (Connect aborts it
   * as soon as this throws), however long it would otherwise wait.
   */
  async *follow<T>(auth: Authenticated, source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
    const it = source[Symbol.asyncIterator]();
    let ended: StreamEnd | null = null;
    let interrupt: ((e: ConnectError) => void) | null = null;
    const watched: Watched = {
      auth,
      checking: false,
      again: false,
      end: (reason) => {
        if (ended) return;
        ended = reason;
        interrupt?.(streamEndError(reason));
      },
    };
    this.add(watched);
    try {
      while (true) {
        if (ended) throw streamEndError(ended);
        if (signal.aborted) return;
        const step = await new Promise<IteratorResult<T>>((resolve, reject) => {
          interrupt = reject;
          it.next().then(resolve, reject);
        });
        interrupt = null;
        if (step.done) return;
        yield step.value;
      }
    } finally {
      interrupt = null;
      this.remove(watched);
      // Not awaited: the source may be parked until its next event; the
      // aborted call context wakes it.
      void Promise.resolve()
        .then(() => it.return?.())
        .catch(() => undefined);
    }
  }

  private add(w: Watched): void {
    const key = w.auth.login.key;
    let set = this.byLogin.get(key);
    if (!set) this.byLogin.set(key, (set = new Set()));
    set.add(w);
    if (this.unsubscribe === null && !this.closed) {
      this.unsubscribe = this.accounts.onSignInChange((change) => this.onChange(change));
      this.timer = setInterval(() => this.recheckAll(), this.recheckMs);
      this.timer.unref();
    }
  }

  private remove(w: Watched): void {
    const key = w.auth.login.key;
    const set = this.byLogin.get(key);
    if (!set) return;
    set.delete(w);
    if (set.size === 0) this.byLogin.delete(key);
    if (this.byLogin.size === 0) this.stopListening();
  }

  private stopListening(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private onChange(change: SignInChange): void {
    if (change.kind === "users") {
      this.recheckAll();
      return;
    }
    const set = this.byLogin.get(change.key);
    if (!set) return;
    if (change.ended) {
      for (const w of [...set]) w.end({ kind: "signed-out" });
      return;
    }
    for (const w of [...set]) this.recheck(w);
  }

  private recheckAll(): void {
    for (const set of this.byLogin.values()) for (const w of [...set]) this.recheck(w);
  }

  private recheck(w: Watched): void {
    if (w.checking) {
      w.again = true;
      return;
    }
    w.checking = true;
    void (async () => {
      try {
        do {
          w.again = false;
          const now = await this.accounts.recheck(w.auth);
          if (!now || now.mustChangePassword) {
            w.end({ kind: "signed-out" });
            return;
          }
          const change = accountChange(w.auth, now);
          if (change !== null) {
            this.logger.info({ username: w.auth.user.username, change }, "account changed: ending its open streams");
            w.end({ kind: "account-changed", detail: change });
            return;
          }
          w.auth = now;
        } while (w.again);
      } catch (err) {
        // Cannot tell: fail closed.
        this.logger.warn({ err }, "sign-in re-check failed; ending the stream");
        w.end({ kind: "signed-out" });
      } finally {
        w.checking = false;
      }
    })();
  }

  /** Stop watching (console shutdown; the streams themselves end with it). */
  close(): void {
    this.closed = true;
    this.stopListening();
  }
}
