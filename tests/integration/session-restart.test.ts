// Sign-ins survive a restart of the console: sign in over HTTP, stop the
// console, start a new one on the same data folder (accounts set up as
// `npm start` does), and the same cookie and CSRF token still work; a
// sign-out before a restart stays signed out.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { setupAccounts } from "@/lib/server/accounts-setup";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { Browser, addPeople, quiet, type WhoAmIJson } from "./actions-harness";

let dir: string;
let env: Record<string, string>;
const running: RunningConsole[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-restart-"));
  env = {
    PORT: "0",
    BATON_STREAM_GRACE_MS: "0",
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_MEMORY_ONLY: "1",
    BATON_USERS_FILE: path.join(dir, "users.json"),
    BATON_SESSION_SECRET_FILE: path.join(dir, "session-secret"),
  };
});

afterAll(async () => {
  while (running.length) await running.pop()?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Start the console as `npm start` does: accounts (and their saved sign-ins) from the environment. */
async function start(): Promise<RunningConsole> {
  const setup = await setupAccounts(env, quiet, { scrypt: TEST_SCRYPT });
  expect(setup.loginsFile).toBe(path.join(dir, "console-sessions.json"));
  const c = await startConsole({
    config: loadConsoleConfig(env, ["--no-ui"], process.cwd()),
    env,
    logger: quiet,
    auth: { accounts: setup.accounts, secret: setup.secret },
  });
  running.push(c);
  return c;
}

async function stop(c: RunningConsole): Promise<void> {
  running.splice(running.indexOf(c), 1);
  await c.close();
}

/** The same browser (cookie, CSRF token) pointed at another console address. */
function moved(b: Browser, url: string): Browser {
  const next = new Browser(url);
  next.cookie = b.cookie;
  next.csrf = b.csrf;
  return next;
}

describe("console restart", () => {
  it("keeps people signed in with the same cookie and CSRF token; sign-outs stay signed out", async () => {
    const first = await start();
    await addPeople(env.BATON_USERS_FILE ?? "", [
      { username: "alice", role: "operator", name: "Alice Ng" },
      { username: "bob", role: "viewer", name: "Bob" },
    ]);
    const alice = new Browser(first.url);
    const me = await alice.login("alice");
    const bob = new Browser(first.url);
    await bob.login("bob");
    await stop(first);

    const text = await readFile(path.join(dir, "console-sessions.json"), "utf8");
    const sid = alice.cookie.slice("baton_session=".length).split(".")[0] ?? "";
    expect(sid).toMatch(/^[\w-]{43}$/);
    expect(text).not.toContain(sid);

    const second = await start();
    const aliceAgain = moved(alice, second.url);
    const whoami = await aliceAgain.whoami();
    expect(whoami.status).toBe(200);
    const again = (await whoami.json()) as WhoAmIJson;
    expect(again).toMatchObject({ username: "alice", role: "operator", csrfToken: me.csrfToken });
    // State-changing calls still pass the CSRF check with the old token.
    expect((await aliceAgain.actions().listDirectory({})).users.length).toBeGreaterThan(0);

    const bobAgain = moved(bob, second.url);
    const out = await fetch(`${second.url}/auth/logout`, {
      method: "POST",
      headers: bobAgain.headers({ "content-type": "application/json", "x-baton-csrf": bobAgain.csrf }),
      body: "{}",
    });
    expect(out.status).toBe(200);
    await stop(second);

    const third = await start();
    expect((await moved(alice, third.url).whoami()).status).toBe(200);
    expect((await moved(bob, third.url).whoami()).status).toBe(401);
  });
});
