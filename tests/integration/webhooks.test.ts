// Outbound notifications end to end: the real console and embedded runtime
// (stored on disk, so the console can restart), people driving a handoff and
// a task through the ActionService, and a real webhook receiver on loopback
// (node:http) that checks every signature.
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "@/lib/accounts/accounts";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { ensureBootstrapAdmin } from "@/lib/accounts/users-file";
import { HandoffOutcome, PolicyChoice, SessionKind, TaskOutcome, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import type { GenericBody } from "@/lib/notify/messages";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { addPeople, Browser, PASSWORD, quiet, SECRET, uuid, type Person } from "./actions-harness";
import { waitFor } from "./harness";

const HOOK_SECRET = "webhook-test-secret-0123456789";
const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng" },
  { username: "bob", role: "operator", name: "Bob Ito" },
  { username: "carol", role: "approver", name: "Carol Lee" },
  { username: "dave", role: "operator", name: "Dave Park" },
  { username: "erin", role: "approver", name: "Erin Diaz" },
  { username: "root", role: "admin", name: "Root Admin" },
];

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  status: number;
}

/** A webhook receiver: records every request; /flaky answers 500 twice per delivery, /down 503 while `down`. */
class Receiver {
  readonly got: Received[] = [];
  down = false;
  private readonly flakyTries = new Map<string, number>();
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let status = 200;
      if (req.url === "/flaky") {
        const id = String(req.headers["x-baton-delivery"]);
        const n = (this.flakyTries.get(id) ?? 0) + 1;
        this.flakyTries.set(id, n);
        if (n <= 2) status = 500;
      }
      if (req.url === "/down" && this.down) status = 503;
      this.got.push({ path: req.url ?? "", headers: req.headers, raw, status });
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(status === 200 ? "ok" : "nope");
    });
  });
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
  /** Accepted (200) generic bodies at `at`, for one session. */
  delivered(at: string, sessionId: string): GenericBody[] {
    return this.got
      .filter((r) => r.path === at && r.status === 200)
      .map((r) => JSON.parse(r.raw) as GenericBody)
      .filter((b) => b.session_id === sessionId);
  }
}

function validSignature(r: Received): boolean {
  const given = String(r.headers["x-baton-signature"] ?? "");
  const expected = `sha256=${createHmac("sha256", HOOK_SECRET).update(r.raw).digest("hex")}`;
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

const receiver = new Receiver();
let dir: string;
let usersFile: string;
let env: Record<string, string>;
let running: RunningConsole;

async function start(): Promise<RunningConsole> {
  const accounts = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT, logger: quiet });
  const e = { ...env };
  return startConsole({
    config: loadConsoleConfig(e, ["--no-ui"], process.cwd()),
    env: e,
    logger: quiet,
    auth: { accounts, secret: SECRET },
  });
}

async function as(username: string): Promise<Browser> {
  const b = new Browser(running.url);
  await b.login(username, PASSWORD);
  return b;
}

function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

beforeAll(async () => {
  await receiver.start();
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-webhooks-"));
  usersFile = path.join(dir, "users.json");
  await ensureBootstrapAdmin(usersFile, { scrypt: TEST_SCRYPT });
  await addPeople(usersFile, PEOPLE);
  await writeFile(
    path.join(dir, "webhooks.json"),
    JSON.stringify({
      webhooks: [
        { id: "all", url: `${receiver.url}/all`, format: "generic", secretEnv: "TEST_HOOK_SECRET" },
        { id: "flaky", url: `${receiver.url}/flaky`, secret: HOOK_SECRET, events: ["task.assigned"] },
        { id: "slack", url: `${receiver.url}/slack`, format: "slack", events: ["offer.declined"], participants: ["human:bob"] },
        { id: "down", url: `${receiver.url}/down`, secret: HOOK_SECRET, events: ["offer.waiting"] },
      ],
    }),
  );
  env = {
    PORT: "0",
    BATON_STREAM_GRACE_MS: "0",
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_MEMORY_ONLY: "0",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    BATON_USERS_FILE: usersFile,
    BATON_DATA_DIR: dir,
    BATON_PUBLIC_URL: "https://baton.example.com/",
    TEST_HOOK_SECRET: HOOK_SECRET,
  };
  running = await start();
}, 60_000);

afterAll(async () => {
  await running?.close();
  await receiver.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("webhooks", () => {
  it("a lead-approval handoff: offer → decline → re-offer → accept → approve, in order, signed, with links and names", async () => {
    const [alice, bob, carol, dave] = (await Promise.all(["alice", "bob", "carol", "dave"].map(as))) as [
      Browser,
      Browser,
      Browser,
      Browser,
    ];
    const started = ok(
      await alice.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.HANDOFF,
        intent: "Payments on-call rotation",
        scope: "payments on-call",
        participants: ["human:bob", "human:dave"],
        ttlMs: 3_600_000,
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
      }),
    );
    const sid = started.sessionId;
    const events = () => receiver.delivered("/all", sid).map((b) => `${b.event} ${b.from} -> ${b.to.join(",")}`);
    const step = async (n: number, what: string) => waitFor(() => events().length >= n, 10_000, what);

    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob", reason: "end of my week" }));
    await step(2, "offer.waiting for bob, approval.upcoming for carol");
    ok(await bob.actions().decline({ sessionId: sid, messageId: uuid(), reason: "on leave" }));
    await step(3, "offer.declined");
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:dave" }));
    await step(5, "offer.waiting for dave, approval.upcoming for carol");
    ok(await dave.actions().accept({ sessionId: sid, messageId: uuid(), reason: "dashboards checked" }));
    await step(7, "offer.accepted and approval.needed");
    ok(await carol.actions().commit({ sessionId: sid, messageId: uuid(), outcome: HandoffOutcome.ACCEPTED, reason: "approved" }));
    await step(8, "session.committed");

    expect(events()).toEqual([
      "offer.waiting human:alice -> human:bob",
      // The approver is told from the moment an approval will be needed.
      "approval.upcoming human:alice -> human:carol",
      "offer.declined human:bob -> human:alice",
      "offer.waiting human:alice -> human:dave",
      "approval.upcoming human:alice -> human:carol",
      "offer.accepted human:dave -> human:alice",
      "approval.needed human:alice -> human:carol",
      `session.committed human:dave -> ${["human:alice", "human:bob", "human:dave", "human:carol"].join(",")}`,
    ]);
    const bodies = receiver.delivered("/all", sid);
    expect(bodies[0]).toMatchObject({
      session_id: sid,
      mode: "macp.mode.handoff.v1",
      intent: "Payments on-call rotation",
      scope: "payments on-call",
      waiting_on: ["human:bob"],
      url: `https://baton.example.com/sessions/${sid}`,
      names: { "human:alice": "Alice Ng", "human:bob": "Bob Ito" },
    });
    expect(bodies[1]).toMatchObject({ event: "approval.upcoming", waiting_on: ["human:bob"], to: ["human:carol"] });
    expect(bodies[6]?.waiting_on).toEqual(["human:carol"]);
    expect(bodies[7]?.outcome).toBe("positive");
    const requests = receiver.got.filter((r) => r.path === "/all" && r.raw.includes(sid));
    for (const r of requests) {
      expect(validSignature(r)).toBe(true);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["x-baton-event"]).toBe((JSON.parse(r.raw) as GenericBody).event);
      expect(r.headers["x-baton-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(Math.abs(Number(r.headers["x-baton-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    }
    // A tampered body does not verify.
    expect(validSignature({ ...requests[0]!, raw: requests[0]!.raw.replace("payments", "Payments") })).toBe(false);

    // Slack: only the decline (its filter), people by display name, a link button.
    await waitFor(() => receiver.got.some((r) => r.path === "/slack" && r.raw.includes(sid)), 5_000, "the Slack message");
    const slack = receiver.got.filter((r) => r.path === "/slack" && r.raw.includes(sid));
    expect(slack).toHaveLength(1);
    const msg = JSON.parse(slack[0]!.raw) as { text: string; blocks: { type: string; elements?: { url: string }[] }[] };
    expect(msg.text).toBe(
      `Bob Ito declined payments on-call: Alice Ng may re-offer or cancel <https://baton.example.com/sessions/${sid}|Open in Baton>`,
    );
    expect(msg.blocks[1]?.elements?.[0]?.url).toBe(`https://baton.example.com/sessions/${sid}`);
    expect(slack[0]!.headers["x-baton-signature"]).toBeUndefined();
  }, 60_000);

  it("a task: assigned and reported; a receiver that fails twice gets it on the third attempt with the same delivery id", async () => {
    const [erin, bob] = (await Promise.all(["erin", "bob"].map(as))) as [Browser, Browser];
    const sid = ok(
      await erin
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.TASK, intent: "Rotate the TLS certificates", participants: ["human:bob"] }),
    ).sessionId;
    const requested = ok(
      await erin.actions().taskRequest({ sessionId: sid, messageId: uuid(), title: "Rotate certs on edge-1", assignee: "human:bob" }),
    );
    await waitFor(() => receiver.delivered("/flaky", sid).length === 1, 15_000, "the flaky receiver's third attempt");
    const tries = receiver.got.filter((r) => r.path === "/flaky" && r.raw.includes(sid));
    expect(tries.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(new Set(tries.map((r) => r.headers["x-baton-delivery"])).size).toBe(1);
    expect(new Set(tries.map((r) => r.raw)).size).toBe(1);
    for (const r of tries) expect(validSignature(r)).toBe(true);

    ok(await bob.actions().taskAccept({ sessionId: sid, messageId: uuid(), taskId: requested.taskId }));
    ok(await bob.actions().taskComplete({ sessionId: sid, messageId: uuid(), summary: "edge-1 rotated" }));
    await waitFor(() => receiver.delivered("/all", sid).some((b) => b.event === "task.reported"), 10_000, "task.reported");
    ok(await erin.actions().taskCommit({ sessionId: sid, messageId: uuid(), outcome: TaskOutcome.COMPLETED }));
    await waitFor(() => receiver.delivered("/all", sid).some((b) => b.event === "session.committed"), 10_000, "task committed");
    expect(receiver.delivered("/all", sid).map((b) => [b.event, b.from, b.to.join(","), b.detail])).toEqual([
      ["task.assigned", "human:erin", "human:bob", ""],
      ["task.reported", "human:bob", "human:erin", "completed"],
      ["session.committed", "human:erin", "human:erin,human:bob", ""],
    ]);

    // Admins see each hook's deliveries and failures; others may not look.
    const refused = await bob
      .actions()
      .listWebhookDeliveries({})
      .catch((e: unknown) => ConnectError.from(e));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.PermissionDenied);
    const root = await as("root");
    const seen = await root.actions().listWebhookDeliveries({ limit: 100 });
    expect(seen.configured).toBe(true);
    expect(seen.hooks.map((h) => [h.id, h.format, h.destination])).toEqual([
      ["all", "generic", receiver.url],
      ["flaky", "generic", receiver.url],
      ["slack", "slack", receiver.url],
      ["down", "generic", receiver.url],
    ]);
    const flaky = seen.hooks[1]?.recent.find((d) => d.sessionId === sid);
    expect(flaky).toMatchObject({ event: "task.assigned", status: "delivered", attempts: 3, lastStatusCode: 200, lastError: "" });
    expect(flaky?.deliveryId).toBe(tries[0]?.headers["x-baton-delivery"]);
    const tooMany = await root
      .actions()
      .listWebhookDeliveries({ limit: 101 })
      .catch((e: unknown) => ConnectError.from(e));
    expect((tooMany as ConnectError).code).toBe(Code.InvalidArgument);
  }, 60_000);

  it("a console restart neither loses nor repeats events; a delivery pending across it keeps its id", async () => {
    const alice = await as("alice");
    receiver.down = true;
    const sid = ok(
      await alice.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.HANDOFF,
        intent: "Restart drill",
        scope: "db on-call",
        participants: ["human:bob"],
      }),
    ).sessionId;
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob" }));
    await waitFor(() => receiver.delivered("/all", sid).length === 1, 10_000, "offer.waiting delivered to /all");
    await waitFor(() => receiver.got.some((r) => r.path === "/down" && r.raw.includes(sid)), 10_000, "a failed attempt at /down");
    const pendingId = receiver.got.find((r) => r.path === "/down" && r.raw.includes(sid))?.headers["x-baton-delivery"];
    // The admin view shows the failure and the next retry.
    const root = await as("root");
    await waitFor(
      async () => {
        const d = (await root.actions().listWebhookDeliveries({})).hooks
          .find((h) => h.id === "down")
          ?.recent.find((r) => r.sessionId === sid);
        return d?.status === "pending" && d.lastStatusCode === 503 && d.lastError === "HTTP 503" && d.nextAttemptUnixMs > 0n;
      },
      5_000,
      "the failed attempt in the admin view",
    );
    const allBefore = receiver.got.filter((r) => r.path === "/all").length;

    await running.close();
    receiver.down = false;
    running = await start();

    await waitFor(() => receiver.delivered("/down", sid).length === 1, 15_000, "the pending delivery after the restart");
    expect(receiver.got.filter((r) => r.path === "/down" && r.raw.includes(sid) && r.status === 200)[0]?.headers["x-baton-delivery"]).toBe(
      pendingId,
    );
    // Nothing sent before the restart is sent again.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.got.filter((r) => r.path === "/all").length).toBe(allBefore);

    // And what happens after it is told once.
    const bob = await as("bob");
    ok(await bob.actions().decline({ sessionId: sid, messageId: uuid(), reason: "busy" }));
    await waitFor(() => receiver.delivered("/all", sid).length === 2, 10_000, "offer.declined after the restart");
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.delivered("/all", sid).map((b) => b.event)).toEqual(["offer.waiting", "offer.declined"]);
  }, 90_000);
  it("follows changes of the webhooks file; an invalid change keeps the hooks in use", async () => {
    const file = path.join(dir, "webhooks.json");
    const root = await as("root");
    const ids = async () => (await root.actions().listWebhookDeliveries({})).hooks.map((h) => h.id);
    await writeFile(file, JSON.stringify({ webhooks: [{ id: "late", url: `${receiver.url}/late`, secretEnv: "TEST_HOOK_SECRET" }] }));
    await waitFor(async () => (await ids()).join() === "late", 10_000, "the new hook in use");
    const alice = await as("alice");
    const sid = ok(
      await alice
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "Late hook", scope: "late", participants: ["human:bob"] }),
    ).sessionId;
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob" }));
    await waitFor(() => receiver.delivered("/late", sid).length === 1, 10_000, "the new hook's first event");
    expect(receiver.delivered("/all", sid)).toEqual([]);
    // A broken file is refused; the hooks in use stay.
    await writeFile(file, "{ not json");
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await ids()).toEqual(["late"]);
    const bob = await as("bob");
    ok(await bob.actions().decline({ sessionId: sid, messageId: uuid() }));
    await waitFor(() => receiver.delivered("/late", sid).length === 2, 10_000, "the next event after the broken change");
  }, 60_000);
  it("a bad webhooks file or BATON_PUBLIC_URL stops the console before it starts, naming the field", async () => {
    const bad = path.join(dir, "bad-webhooks.json");
    await writeFile(bad, JSON.stringify({ webhooks: [{ id: "x", url: "ftp://example.com/hook", secret: HOOK_SECRET }] }));
    const attempt = async (extra: Record<string, string>) => {
      const e = { ...env, PORT: "0", ...extra };
      const accounts = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT, logger: quiet });
      return startConsole({
        config: loadConsoleConfig(e, ["--no-ui"], process.cwd()),
        env: e,
        logger: quiet,
        auth: { accounts, secret: SECRET },
      }).then(
        async (c) => {
          await c.close();
          return null;
        },
        (err: unknown) => err as Error,
      );
    };
    const e1 = await attempt({ BATON_WEBHOOKS_FILE: bad });
    expect(e1?.name).toBe("ConsoleConfigError");
    expect(e1?.message).toBe(`${bad}: webhook "x": url must be http:// or https://`);
    const e2 = await attempt({ BATON_PUBLIC_URL: "baton.example.com" });
    expect(e2?.message).toMatch(/^BATON_PUBLIC_URL must be/);
  });
});
