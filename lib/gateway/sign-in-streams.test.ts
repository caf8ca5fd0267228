import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Accounts, type Authenticated } from "@/lib/accounts/accounts";
import { TEST_SCRYPT, hashPassword } from "@/lib/accounts/password";
import { writeUsersFile } from "@/lib/accounts/users-file";
import { SignInStreams } from "./sign-in-streams";

const SECRET = Buffer.from("a-test-session-secret-that-is-long-enough");
const PASSWORD = "alice's long password";

let dir: string;
let now: number;
let accounts: Accounts;
let streams: SignInStreams;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-streams-"));
  const usersFile = path.join(dir, "users.json");
  await writeUsersFile(usersFile, {
    version: 1,
    users: [
      {
        username: "alice",
        displayName: "Alice",
        role: "operator",
        participantId: "human:alice",
        passwordHash: await hashPassword(PASSWORD, TEST_SCRYPT),
      },
    ],
  });
  now = 1_000_000;
  accounts = new Accounts({
    usersFile,
    loginSecret: SECRET,
    scrypt: TEST_SCRYPT,
    idleMs: 60_000,
    absoluteMs: 600_000,
    now: () => now,
    usersPollMs: 20,
  });
  streams = new SignInStreams({ accounts, recheckMs: 30 });
});

afterEach(async () => {
  streams.close();
  await rm(dir, { recursive: true, force: true });
});

async function signIn(): Promise<Authenticated> {
  const r = await accounts.login({ username: "alice", password: PASSWORD, ip: "10.0.0.1" });
  if (!r.ok) throw new Error(r.reason);
  const auth = await accounts.authenticate({ cookie: `baton_session=${r.cookieValue}` });
  if (!auth) throw new Error("not signed in");
  return auth;
}

/** A source that yields once, then waits forever (like a stream between heartbeats), recording its cleanup. */
function parkedSource(signal: AbortSignal): { source: AsyncGenerator<number>; cleanedUp: () => boolean } {
  let cleaned = false;
  const source = (async function* () {
    try {
      yield 1;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    } finally {
      cleaned = true;
    }
  })();
  return { source, cleanedUp: () => cleaned };
}

async function drain(it: AsyncIterable<number>): Promise<{ values: number[]; error: ConnectError | null }> {
  const values: number[] = [];
  try {
    for await (const v of it) values.push(v);
    return { values, error: null };
  } catch (e) {
    return { values, error: ConnectError.from(e) };
  }
}

describe("SignInStreams.follow", () => {
  it("ends a parked stream as soon as its sign-in ends, and its source is cleaned up once the call is aborted", async () => {
    const auth = await signIn();
    const call = new AbortController();
    const { source, cleanedUp } = parkedSource(call.signal);
    const run = drain(streams.follow(auth, source, call.signal));
    await new Promise((r) => setTimeout(r, 10));
    expect(streams.size).toBe(1);
    accounts.logins.destroy(auth.login);
    const { values, error } = await run;
    expect(values).toEqual([1]);
    expect(error?.code).toBe(Code.Unauthenticated);
    expect(streams.size).toBe(0);
    // Connect aborts the call's context when the stream fails; the source then unwinds.
    call.abort();
    await new Promise((r) => setTimeout(r, 10));
    expect(cleanedUp()).toBe(true);
  });

  it("passes a stream through untouched while the sign-in holds, and stops watching when it completes", async () => {
    const auth = await signIn();
    const call = new AbortController();
    const source = (async function* () {
      for (let i = 0; i < 5; i++) yield i;
    })();
    expect(await drain(streams.follow(auth, source, call.signal))).toEqual({ values: [0, 1, 2, 3, 4], error: null });
    expect(streams.size).toBe(0);
  });

  it("re-checks periodically without keeping the session alive: an idle session expires under an open stream", async () => {
    const auth = await signIn();
    const call = new AbortController();
    const { source } = parkedSource(call.signal);
    const run = drain(streams.follow(auth, source, call.signal));
    // Several backstop re-checks: still signed in, and none of them counts as activity.
    await new Promise((r) => setTimeout(r, 100));
    expect(streams.size).toBe(1);
    expect(auth.login.lastSeenAt).toBe(1_000_000);
    now += 60_000; // idle timeout reached
    const { error } = await run;
    expect(error?.code).toBe(Code.Unauthenticated);
    call.abort();
  });
});
