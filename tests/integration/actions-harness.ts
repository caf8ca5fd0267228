// Helpers for the sign-in and action tests: the real console server with the
// real embedded runtime (memory only, port 0), a temporary users file with
// people created through the accounts API (cheap scrypt), and "browsers" that
// sign in over HTTP and call Connect with their cookie and CSRF token.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pino from "pino";
import { Accounts } from "@/lib/accounts/accounts";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { runUsersCli } from "@/lib/accounts/users-cli";
import { ensureBootstrapAdmin, updateUsersFile } from "@/lib/accounts/users-file";
import type { Role } from "@/lib/authz/roles";
import { ActionService, type WatchInboxResponse, type InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";

export const PASSWORD = "correct horse battery staple";
export const SECRET = Buffer.from("actions-test-session-secret-that-is-long-enough");
export const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

export interface Person {
  username: string;
  role: Role;
  name: string;
  /** Participant id; default human:<username>. */
  participant?: string;
  runtimeToken?: string;
}

export interface TestConsole {
  console: RunningConsole;
  url: string;
  usersFile: string;
  accounts: Accounts;
  /** The bootstrap admin's one-time password. */
  adminPassword: string;
  close(): Promise<void>;
}

/** Create people in a users file with the users CLI logic (as `npm run users -- add` does). */
export async function addPeople(usersFile: string, people: readonly Person[]): Promise<void> {
  for (const p of people) {
    const errors: string[] = [];
    const code = await runUsersCli(
      [
        "add",
        p.username,
        "--role",
        p.role,
        "--name",
        p.name,
        "--password-stdin",
        "--file",
        usersFile,
        ...(p.participant ? ["--participant", p.participant] : []),
      ],
      { out: () => undefined, err: (t) => errors.push(t), readPassword: async () => PASSWORD, env: {} },
      { scrypt: TEST_SCRYPT },
    );
    if (code !== 0) throw new Error(`users add ${p.username} failed: ${errors.join("")}`);
  }
  const tokens = people.filter((p) => p.runtimeToken !== undefined);
  if (tokens.length > 0) {
    await updateUsersFile(usersFile, (data) => {
      for (const p of tokens) {
        const u = data.users.find((x) => x.username === p.username);
        if (u && p.runtimeToken !== undefined) u.runtimeToken = p.runtimeToken;
      }
    });
  }
}

export async function startTestConsole(
  people: readonly Person[],
  env: Record<string, string> = {},
  argv: string[] = ["--no-ui"],
): Promise<TestConsole> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "baton-actions-"));
  const usersFile = path.join(dir, "users.json");
  const boot = await ensureBootstrapAdmin(usersFile, { scrypt: TEST_SCRYPT });
  await addPeople(usersFile, people);
  const accounts = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT, logger: quiet });
  const full = {
    PORT: "0",
    BATON_STREAM_GRACE_MS: "0",
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_MEMORY_ONLY: "1",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    BATON_USERS_FILE: usersFile,
    // The console catalog (with an external runtime) goes to this test's own folder.
    BATON_DATA_DIR: dir,
    ...env,
  };
  const c = await startConsole({
    config: loadConsoleConfig(full, argv, process.cwd()),
    env: full,
    logger: quiet,
    auth: { accounts, secret: SECRET },
  });
  return {
    console: c,
    url: c.url,
    usersFile,
    accounts,
    adminPassword: boot.password ?? "",
    async close() {
      await c.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface WhoAmIJson {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  authMethod: string;
  mustChangePassword: boolean;
  csrfToken: string;
  sessionEndsAt: number;
}

/** A browser: a cookie jar of one, the CSRF token from whoami, and Connect clients carrying both. */
export class Browser {
  cookie = "";
  csrf = "";
  /** Sent as Origin on every request unless null. */
  origin: string | null;
  /** Overrides the CSRF header (undefined = the real token, "" = none). */
  csrfOverride: string | undefined = undefined;

  constructor(readonly baseUrl: string) {
    this.origin = baseUrl;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...(this.cookie ? { cookie: this.cookie } : {}),
      ...(this.origin ? { origin: this.origin } : {}),
      ...extra,
    };
  }

  /** Keep the session cookie from a response's Set-Cookie headers. */
  keepCookies(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = (pair ?? "").indexOf("=");
      const name = (pair ?? "").slice(0, eq);
      const value = (pair ?? "").slice(eq + 1);
      if (name !== "baton_session") continue;
      this.cookie = value === "" ? "" : `baton_session=${value}`;
    }
  }

  async login(username: string, password = PASSWORD): Promise<WhoAmIJson> {
    const res = await fetch(`${this.baseUrl}/auth/login`, {
      method: "POST",
      headers: this.headers({ "content-type": "application/json" }),
      body: JSON.stringify({ username, password }),
    });
    if (res.status !== 200) throw new Error(`sign-in as ${username}: ${res.status} ${await res.text()}`);
    this.keepCookies(res);
    const me = (await res.json()) as WhoAmIJson;
    this.csrf = me.csrfToken;
    return me;
  }

  async whoami(): Promise<Response> {
    return fetch(`${this.baseUrl}/auth/whoami`, { headers: this.headers() });
  }

  private interceptor(): Interceptor {
    return (next) => (req) => {
      for (const [k, v] of Object.entries(this.headers())) req.header.set(k, v);
      const token = this.csrfOverride ?? this.csrf;
      if (token !== "") req.header.set("x-baton-csrf", token);
      return next(req);
    };
  }

  actions(): Client<typeof ActionService> {
    return createClient(
      ActionService,
      createConnectTransport({ baseUrl: this.baseUrl, httpVersion: "1.1", interceptors: [this.interceptor()] }),
    );
  }

  console(): Client<typeof ConsoleService> {
    return createClient(
      ConsoleService,
      createConnectTransport({ baseUrl: this.baseUrl, httpVersion: "1.1", interceptors: [this.interceptor()] }),
    );
  }
}

export async function signedIn(tc: TestConsole, username: string, password = PASSWORD): Promise<Browser> {
  const b = new Browser(tc.url);
  await b.login(username, password);
  return b;
}

/** A background WatchInbox: keeps every InboxUpdate's items (and its approvals ahead). */
export function watchInbox(b: Browser) {
  const updates: InboxItem[][] = [];
  const aheads: InboxItem[][] = [];
  const news: InboxItem[][] = [];
  const ac = new AbortController();
  let error: unknown = null;
  const done = (async () => {
    try {
      for await (const m of b.actions().watchInbox({}, { signal: ac.signal }) as AsyncIterable<WatchInboxResponse>) {
        if (m.item.case === "update") {
          updates.push(m.item.value.items);
          aheads.push(m.item.value.ahead);
          news.push(m.item.value.news);
        }
      }
    } catch (e) {
      if (!ac.signal.aborted) error = e;
    }
  })();
  return {
    updates,
    get latest(): InboxItem[] | undefined {
      return updates[updates.length - 1];
    },
    get latestAhead(): InboxItem[] | undefined {
      return aheads[aheads.length - 1];
    },
    get latestNews(): InboxItem[] | undefined {
      return news[news.length - 1];
    },
    get error() {
      return error;
    },
    async stop() {
      ac.abort();
      await done;
    },
  };
}

export function uuid(): string {
  return globalThis.crypto.randomUUID();
}
