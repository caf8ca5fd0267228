// Open browser streams follow the sign-in they were opened with (issue 10,
// item 2): after a sign-out, an account disabled, a password changed or a
// role changed, SubscribeSession, WatchSessionChanges and WatchInbox end within
// a few seconds (heartbeats used to keep them alive forever); on a role
// change the stream starts again under the new role. The real console server
// and embedded runtime; the users file is edited as `npm run users` edits it.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword, TEST_SCRYPT } from "@/lib/accounts/password";
import { updateUsersFile } from "@/lib/accounts/users-file";
import { SessionKind, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import { type Browser, PASSWORD, signedIn, startTestConsole, uuid, type TestConsole } from "./actions-harness";

let tc: TestConsole;
let sessionId: string;

const PEOPLE = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"] as const;

beforeAll(async () => {
  tc = await startTestConsole(
    PEOPLE.map((u) => ({ username: u, role: "operator" as const, name: u.toUpperCase() })),
    // Heartbeats every 200 ms: a stream that is not ended keeps receiving them.
    { BATON_HEARTBEAT_MS: "200" },
  );
  const alice = await signedIn(tc, "alice");
  const started = ok(
    await alice
      .actions()
      .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "revocation", participants: PEOPLE.map((p) => `human:${p}`) }),
  );
  sessionId = started.sessionId;
  // An offer waits on frank: his inbox has one item (the role-change test).
  ok(await alice.actions().offer({ sessionId, messageId: uuid(), target: "human:frank", scope: "pager" }));
}, 60_000);

afterAll(async () => {
  await tc?.close();
});

function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

type Kind = "session" | "list" | "inbox";

interface Open {
  kind: Kind;
  messages: number;
  /** Inbox item counts, per update. */
  inboxSizes: number[];
  ended: Promise<ConnectError | "completed">;
  stop(): void;
}

function open(b: Browser, kind: Kind): Open {
  const ac = new AbortController();
  const state: Open = { kind, messages: 0, inboxSizes: [], ended: Promise.resolve("completed"), stop: () => ac.abort() };
  const iterate = async (): Promise<void> => {
    if (kind === "session") {
      for await (const _ of b.console().subscribeSession({ sessionId }, { signal: ac.signal })) state.messages++;
    } else if (kind === "list") {
      for await (const _ of b.console().watchSessionChanges({}, { signal: ac.signal })) state.messages++;
    } else {
      for await (const m of b.actions().watchInbox({}, { signal: ac.signal })) {
        state.messages++;
        if (m.item.case === "update") state.inboxSizes.push(m.item.value.items.length);
      }
    }
  };
  state.ended = iterate().then(
    () => "completed" as const,
    (e: unknown) => ConnectError.from(e),
  );
  return state;
}

/** All three streams of one person, once each has delivered something. */
async function openAll(b: Browser): Promise<Open[]> {
  const streams = (["session", "list", "inbox"] as const).map((k) => open(b, k));
  const deadline = Date.now() + 5_000;
  while (streams.some((s) => s.messages === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(streams.map((s) => s.messages > 0)).toEqual([true, true, true]);
  return streams;
}

/** How each stream ended within `withinMs`: the error code, or "open". */
async function endings(streams: Open[], withinMs = 5_000): Promise<(Code | "completed" | "open")[]> {
  const timeout = new Promise<"open">((r) => setTimeout(() => r("open"), withinMs));
  const out = await Promise.all(streams.map((s) => Promise.race([s.ended, timeout])));
  for (const s of streams) s.stop();
  return out.map((o) => (o instanceof ConnectError ? o.code : o));
}

const unauthenticated = [Code.Unauthenticated, Code.Unauthenticated, Code.Unauthenticated];

describe("open streams end with the sign-in", () => {
  it("on sign-out", async () => {
    const bob = await signedIn(tc, "bob");
    const streams = await openAll(bob);
    const out = await fetch(`${tc.url}/auth/logout`, {
      method: "POST",
      headers: bob.headers({ "content-type": "application/json", "x-baton-csrf": bob.csrf }),
      body: "{}",
    });
    expect(out.status).toBe(200);
    expect(await endings(streams)).toEqual(unauthenticated);
    const err = await streams[0]?.ended;
    expect(err instanceof ConnectError && err.rawMessage).toMatch(/not signed in/);
  });

  it("when an admin disables the account (users file edited by another process)", async () => {
    const carol = await signedIn(tc, "carol");
    const streams = await openAll(carol);
    await updateUsersFile(tc.usersFile, (d) => {
      const u = d.users.find((x) => x.username === "carol");
      if (u) u.disabled = true;
    });
    expect(await endings(streams)).toEqual(unauthenticated);
  });

  it("when the password is reset from the command line", async () => {
    const dave = await signedIn(tc, "dave");
    const streams = await openAll(dave);
    const hash = await hashPassword("a brand new password for dave", TEST_SCRYPT);
    await updateUsersFile(tc.usersFile, (d) => {
      const u = d.users.find((x) => x.username === "dave");
      if (u) u.passwordHash = hash;
    });
    expect(await endings(streams)).toEqual(unauthenticated);
  });

  it("when the person changes their password in another browser: other sign-ins end, the one that changed it goes on", async () => {
    const here = await signedIn(tc, "erin");
    const elsewhere = await signedIn(tc, "erin");
    const theirs = await openAll(elsewhere);
    const mine = await openAll(here);
    const res = await fetch(`${tc.url}/auth/password`, {
      method: "POST",
      headers: here.headers({ "content-type": "application/json", "x-baton-csrf": here.csrf }),
      body: JSON.stringify({ currentPassword: PASSWORD, newPassword: "erin's second long password" }),
    });
    expect(res.status).toBe(200);
    expect(await endings(theirs)).toEqual(unauthenticated);
    const before = mine.map((s) => s.messages);
    expect(await endings(mine, 1_000)).toEqual(["open", "open", "open"]);
    // Still delivering (heartbeats at least).
    expect(mine.map((s, i) => s.messages > (before[i] ?? 0))).toEqual([true, true, true]);
  });

  it("on a role change: the streams start again under the new role", async () => {
    const frank = await signedIn(tc, "frank");
    const streams = await openAll(frank);
    const inbox = streams[2];
    // An operator with an offer waiting.
    const deadline = Date.now() + 5_000;
    while ((inbox?.inboxSizes.length ?? 0) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(inbox?.inboxSizes.at(-1)).toBe(1);
    await updateUsersFile(tc.usersFile, (d) => {
      const u = d.users.find((x) => x.username === "frank");
      if (u) u.role = "viewer";
    });
    expect(await endings(streams)).toEqual([Code.Aborted, Code.Aborted, Code.Aborted]);
    const err = await streams[0]?.ended;
    expect(err instanceof ConnectError && err.rawMessage).toMatch(/role operator → viewer/);
    // Reconnecting (as browsers do after ABORTED): the same sign-in, the new role.
    const again = open(frank, "inbox");
    const until = Date.now() + 5_000;
    while (again.inboxSizes.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    again.stop();
    // A viewer cannot accept offers, so nothing waits on them.
    expect(again.inboxSizes[0]).toBe(0);
  });

  it("leaves other people's streams alone, and keeps nothing registered once streams end", async () => {
    const gina = await signedIn(tc, "gina");
    const streams = await openAll(gina);
    const bob = await signedIn(tc, "bob");
    await fetch(`${tc.url}/auth/logout`, {
      method: "POST",
      headers: bob.headers({ "content-type": "application/json", "x-baton-csrf": bob.csrf }),
      body: "{}",
    });
    expect(await endings(streams, 1_000)).toEqual(["open", "open", "open"]);
    // Every stream opened above has ended on the server too.
    let open = -1;
    for (const until = Date.now() + 3_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      open = (await gina.console().getGatewayStats({})).browserStreams;
      if (open === 0) break;
    }
    expect(open).toBe(0);
  });
});
