// The attacks on the console that held when it was attacked from outside
// (issue 10, "for the record"), kept in the suite so they keep holding:
// every call signed out, every action as a viewer, CSRF and Origin variants
// against raw HTTP, sign-in fixation, and acting as another participant.
// The method matrices walk the service descriptors, so a method added later
// is covered without touching this file. Real console server, real embedded
// runtime (dev auth, memory only), raw fetch where a browser could misbehave.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ActionService,
  DemoControlAction,
  EscalationStepKind,
  HandoffOutcome,
  SessionKind,
  TaskOutcome,
  type ActionResult,
} from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { clientFor, collectEnvelopes } from "./harness";
import { Browser, PASSWORD, signedIn, startTestConsole, uuid, type TestConsole } from "./actions-harness";

let tc: TestConsole;
let alice: Browser;
let bob: Browser;
let victor: Browser;

beforeAll(async () => {
  tc = await startTestConsole([
    { username: "alice", role: "operator", name: "Alice Ng" },
    { username: "bob", role: "operator", name: "Bob Ito" },
    { username: "dave", role: "operator", name: "Dave Park" },
    { username: "victor", role: "viewer", name: "Victor Viewer" },
  ]);
  [alice, bob, victor] = await Promise.all([signedIn(tc, "alice"), signedIn(tc, "bob"), signedIn(tc, "victor")]);
});

afterAll(async () => {
  await tc?.close();
});

function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

/** Call any method with an empty request, draining streams; the error, or null when it was answered. */
async function callEmpty(b: Browser, service: DescService, method: DescMethod): Promise<ConnectError | null> {
  const client = createClient(
    service,
    createConnectTransport({
      baseUrl: b.baseUrl,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          for (const [k, v] of Object.entries(b.headers())) req.header.set(k, v);
          if (b.csrf) req.header.set("x-baton-csrf", b.csrf);
          return next(req);
        },
      ],
    }),
  ) as unknown as Record<string, (req: object, opts: { signal: AbortSignal }) => unknown>;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 3_000);
  try {
    const out = client[method.localName]?.({}, { signal: ac.signal });
    if (method.methodKind === "server_streaming") {
      for await (const _ of out as AsyncIterable<unknown>) {
        // One message means the stream was served.
        return null;
      }
      return null;
    }
    await out;
    return null;
  } catch (e) {
    return ConnectError.from(e);
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

async function history(sessionId: string, count: number) {
  const rt = tc.console.runtime;
  if (!rt) throw new Error("no embedded runtime");
  return collectEnvelopes(clientFor({ url: rt.url }, "baton:console"), sessionId, count, { timeoutMs: 1_500 });
}

describe("signed out", () => {
  it("every call of both services is refused with UNAUTHENTICATED, reads and streams included", async () => {
    const anonymous = new Browser(tc.url);
    for (const service of [ConsoleService, ActionService]) {
      for (const method of service.methods) {
        const err = await callEmpty(anonymous, service, method);
        expect(err?.code, `${service.name}.${method.name}`).toBe(Code.Unauthenticated);
      }
    }
  });

  it("a forged, truncated or re-signed cookie is the same as none", async () => {
    const real = alice.cookie.slice("baton_session=".length);
    const [sid = "", sig = ""] = real.split(".");
    // The signature's last character changed (to "A", or to "B" when it already was "A").
    const tampered = `${sig.slice(0, -1)}${sig.endsWith("A") ? "B" : "A"}`;
    for (const value of [`${sid}.`, `${sid}.${tampered}`, `${sig}.${sid}`, `${sid}`, "x".repeat(87), `${sid}.${sig}.${sig}`]) {
      const b = new Browser(tc.url);
      b.cookie = `baton_session=${value}`;
      b.csrf = alice.csrf;
      expect((await callEmpty(b, ActionService, ActionService.method.listDirectory))?.code, value).toBe(Code.Unauthenticated);
    }
  });
});

describe("a viewer", () => {
  it("may read but every action is refused, and nothing reaches the runtime as them", async () => {
    // A handoff offered to bob and a task requested from bob, so every action has a target.
    const h = ok(
      await alice
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "viewer matrix", participants: ["human:bob"] }),
    ).sessionId;
    ok(await alice.actions().offer({ sessionId: h, messageId: uuid(), target: "human:bob", scope: "pager" }));
    const t = ok(
      await alice.actions().startSession({ messageId: uuid(), kind: SessionKind.TASK, intent: "viewer task", participants: ["human:bob"] }),
    ).sessionId;
    ok(await alice.actions().taskRequest({ sessionId: t, messageId: uuid(), title: "do it", assignee: "human:bob" }));
    const a = victor.actions();
    const id = () => uuid();
    const attempts: [string, () => Promise<unknown>][] = [
      ["startSession", () => a.startSession({ messageId: id(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:bob"] })],
      ["offer", () => a.offer({ sessionId: h, messageId: id(), target: "human:dave" })],
      ["attachContext", () => a.attachContext({ sessionId: h, messageId: id(), content: { case: "markdown", value: "# hi" } })],
      ["accept", () => a.accept({ sessionId: h, messageId: id() })],
      ["decline", () => a.decline({ sessionId: h, messageId: id() })],
      ["commit", () => a.commit({ sessionId: h, messageId: id(), outcome: HandoffOutcome.DECLINED })],
      ["cancel", () => a.cancel({ sessionId: h, messageId: id() })],
      ["taskRequest", () => a.taskRequest({ sessionId: t, messageId: id(), title: "again", assignee: "human:bob" })],
      ["taskAccept", () => a.taskAccept({ sessionId: t, messageId: id() })],
      ["taskReject", () => a.taskReject({ sessionId: t, messageId: id() })],
      ["taskUpdate", () => a.taskUpdate({ sessionId: t, messageId: id(), progress: 0.5 })],
      ["taskComplete", () => a.taskComplete({ sessionId: t, messageId: id(), summary: "done" })],
      ["taskFail", () => a.taskFail({ sessionId: t, messageId: id(), errorCode: "X", reason: "no" })],
      ["taskCommit", () => a.taskCommit({ sessionId: t, messageId: id(), outcome: TaskOutcome.COMPLETED })],
      [
        "runDemo",
        async () => {
          for await (const _ of a.runDemo({ scenario: "oncall-rotation", speed: 1 })) return;
        },
      ],
      // Admin-only read: a viewer may not see the webhooks either.
      ["listWebhookDeliveries", () => a.listWebhookDeliveries({})],
      // "Hand off…" templates are for people who may start sessions (decide()'s manageHandoffTemplates).
      ["listHandoffTemplates", () => a.listHandoffTemplates({})],
      ["saveHandoffTemplate", () => a.saveHandoffTemplate({ template: { name: "mine", scope: "pager" } })],
      ["deleteHandoffTemplate", () => a.deleteHandoffTemplate({ id: uuid() })],
      ["controlDemo", () => a.controlDemo({ runId: uuid(), action: DemoControlAction.PAUSE })],
      [
        "startEscalation",
        () =>
          a.startEscalation({
            sessionId: h,
            messageId: id(),
            steps: [{ kind: EscalationStepKind.NOTIFY, afterMinutes: 5, participants: ["human:carol"] }],
          }),
      ],
      ["cancelEscalation", () => a.cancelEscalation({ sessionId: h })],
    ];
    // Every mutating method of the service is in the list.
    const reads = new Set(["listDirectory", "watchInbox", "getPolicy", "getCapabilities", "getEscalation"]);
    expect(attempts.map(([n]) => n).sort()).toEqual(
      ActionService.methods
        .map((m) => m.localName)
        .filter((n) => !reads.has(n))
        .sort(),
    );
    for (const [name, call] of attempts) {
      let outcome: string;
      try {
        const r = (await call()) as ActionResult | undefined;
        outcome = r && "ok" in r ? (r.ok ? "accepted" : `refused ${r.code}`) : "answered";
      } catch (e) {
        outcome = Code[ConnectError.from(e).code];
      }
      expect(outcome, name).toBe(Code[Code.PermissionDenied]);
    }
    // Reads work.
    expect((await a.listDirectory({})).users.length).toBeGreaterThan(0);
    expect((await victor.console().getSessionSummary({ sessionId: h })).summary?.metadata?.sessionId).toBe(h);
    // Nothing was sent as the viewer.
    for (const [sid, n] of [
      [h, 2],
      [t, 2],
    ] as const) {
      const got = await history(sid, n + 1);
      expect(got.map((e) => e.sender).filter((s) => s === "human:victor")).toEqual([]);
    }
  });
});

describe("CSRF and Origin", () => {
  let sessionId = "";
  beforeAll(async () => {
    sessionId = ok(
      await alice
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "csrf target", participants: ["human:bob", "human:dave"] }),
    ).sessionId;
  });

  /** A raw Connect JSON POST of Offer by bob, as a page on another site could make his browser send it. */
  async function rawOffer(headers: Record<string, string>): Promise<{ status: number; body: string; deny: string | null }> {
    const res = await fetch(`${tc.url}/baton.v1.ActionService/Offer`, {
      method: "POST",
      headers: { cookie: bob.cookie, "content-type": "application/json", ...headers },
      body: JSON.stringify({ sessionId, messageId: uuid(), target: "human:dave" }),
    });
    return { status: res.status, body: await res.text(), deny: res.headers.get("x-baton-deny") };
  }

  it("refuses state changes without the session's token, from another origin, or as a simple cross-site form", async () => {
    const same = { origin: tc.url, "sec-fetch-site": "same-origin" };
    const variants: [string, Record<string, string>][] = [
      ["no token", { ...same }],
      ["wrong token", { ...same, "x-baton-csrf": "A".repeat(43) }],
      ["another person's token", { ...same, "x-baton-csrf": alice.csrf }],
      ["token in lower-case variant header only", { ...same, "X-Baton-Csrf": "" }],
      ["evil origin", { origin: "https://evil.example", "x-baton-csrf": bob.csrf }],
      ["other port, same host", { origin: tc.url.replace(/:(\d+)$/, (_m, p: string) => `:${Number(p) + 1}`), "x-baton-csrf": bob.csrf }],
      ["opaque origin", { origin: "null", "x-baton-csrf": bob.csrf }],
      ["cross-site fetch", { "sec-fetch-site": "cross-site", "x-baton-csrf": bob.csrf }],
      ["same-site fetch", { "sec-fetch-site": "same-site", "x-baton-csrf": bob.csrf }],
      ["text/plain simple request", { ...same, "content-type": "text/plain" }],
      ["form-encoded simple request", { ...same, "content-type": "application/x-www-form-urlencoded" }],
    ];
    for (const [name, headers] of variants) {
      const { status, body, deny } = await rawOffer(headers);
      // Refused before the action runs: by the CSRF/Origin check, or by Connect's content type check.
      if (status === 415) continue;
      expect([status, deny], `${name}: ${body}`).toEqual([403, "csrf"]);
    }
    // A GET cannot change anything either.
    const get = await fetch(`${tc.url}/baton.v1.ActionService/Offer?message=${encodeURIComponent("{}")}&encoding=json`, {
      headers: { cookie: bob.cookie },
    });
    expect(get.status).toBeGreaterThanOrEqual(400);
    // With the token from this console's own page, the call goes through and is answered on its
    // merits: bob is not the owner, so the offer is refused by the rules, not by the CSRF check.
    const through = await rawOffer({ ...same, "x-baton-csrf": bob.csrf });
    expect(through.deny).toBe("authority");
    expect(JSON.parse(through.body)).toEqual({
      code: "permission_denied",
      message: "Only the session's owner (Alice Ng) can offer the handoff.",
    });
    // Nothing was sent by any refused request.
    expect((await history(sessionId, 2)).map((e) => e.messageType)).toEqual(["SessionStart"]);
  });

  it("signing out and changing a password need the token and the console's origin too", async () => {
    const b = await signedIn(tc, "dave");
    const variants: Record<string, string>[] = [{}, { "x-baton-csrf": "nope" }, { origin: "https://evil.example", "x-baton-csrf": b.csrf }];
    for (const headers of variants) {
      const out = await fetch(`${tc.url}/auth/logout`, {
        method: "POST",
        headers: { cookie: b.cookie, "content-type": "application/json", ...headers },
        body: "{}",
      });
      expect(out.status).toBe(403);
      const pw = await fetch(`${tc.url}/auth/password`, {
        method: "POST",
        headers: { cookie: b.cookie, "content-type": "application/json", ...headers },
        body: JSON.stringify({ currentPassword: PASSWORD, newPassword: "something else long enough" }),
      });
      expect(pw.status).toBe(403);
    }
    expect((await b.whoami()).status).toBe(200);
  });
});

describe("sign-in fixation", () => {
  it("a cookie planted before sign-in never becomes the signed-in session", async () => {
    // The attacker signs in as themselves and plants their cookie in the victim's browser.
    const attacker = await signedIn(tc, "victor");
    const planted = attacker.cookie;
    const victim = new Browser(tc.url);
    victim.cookie = planted;
    const me = await victim.login("alice");
    expect(me.username).toBe("alice");
    expect(victim.cookie).not.toBe(planted);
    // The planted session was ended by the new sign-in, and never names alice.
    const reuse = await fetch(`${tc.url}/auth/whoami`, { headers: { cookie: planted } });
    expect(reuse.status).toBe(401);
    // A forged value planted beforehand is simply replaced.
    const forged = new Browser(tc.url);
    forged.cookie = `baton_session=${"A".repeat(43)}.${"B".repeat(43)}`;
    await forged.login("bob");
    expect(forged.cookie).not.toContain("A".repeat(43));
    // And the CSRF token is per session: the old one does not carry over.
    expect(me.csrfToken).not.toBe(attacker.csrf);
  });
});

describe("acting as another participant", () => {
  it("a person can answer only offers and tasks addressed to them; whatever they send carries their own id", async () => {
    const h = ok(
      await alice
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "not yours", participants: ["human:bob", "human:dave"] }),
    ).sessionId;
    ok(await alice.actions().offer({ sessionId: h, messageId: uuid(), target: "human:bob", scope: "pager" }));
    const dave = await signedIn(tc, "dave");
    for (const call of [
      dave.actions().accept({ sessionId: h, messageId: uuid() }),
      dave.actions().decline({ sessionId: h, messageId: uuid() }),
      alice.actions().accept({ sessionId: h, messageId: uuid() }),
    ]) {
      const r = await call.then(
        (x) => (x.ok ? "accepted" : x.code),
        (e: unknown) => Code[ConnectError.from(e).code],
      );
      expect(["FORBIDDEN", "PermissionDenied"]).toContain(r);
    }
    ok(await bob.actions().accept({ sessionId: h, messageId: uuid(), reason: "mine" }));
    const got = await history(h, 3);
    expect(got.map((e) => [e.messageType, e.sender])).toEqual([
      ["SessionStart", "human:alice"],
      ["HandoffOffer", "human:alice"],
      ["HandoffAccept", "human:bob"],
    ]);
  });
});
