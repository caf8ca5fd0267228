// Escalation chains against the real console and embedded runtime (stored on
// disk, so the console can restart): a chain fires after its timeout (the
// approver told through the webhooks, then the handoff re-offered to the
// next person as the owner, with the runbook), stops when the offer is
// answered, can be cancelled by its owner only, survives a restart, and a
// step re-run after a crash between its sends and its record sends nothing
// twice. One chain "minute" is BATON_ESCALATION_MINUTE_MS = 400 ms here.
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { fromBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "@/lib/accounts/accounts";
import { ensureBootstrapAdmin } from "@/lib/accounts/users-file";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import {
  EscalationState,
  EscalationStepKind,
  InboxItemKind,
  PolicyChoice,
  SessionKind,
  type ActionResult,
  type Escalation,
} from "@/lib/gen/baton/v1/actions_pb";
import { HandoffContextPayloadSchema, HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { EscalationStore } from "@/lib/gateway/escalations";
import { addPeople, Browser, PASSWORD, quiet, SECRET, uuid, watchInbox, type Person } from "./actions-harness";
import { clientFor, collectEnvelopes, waitFor } from "./harness";

const MINUTE_MS = 400;
const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng" },
  { username: "bob", role: "operator", name: "Bob Ito" },
  { username: "carol", role: "approver", name: "Carol Lee" },
  { username: "dave", role: "operator", name: "Dave Park" },
];
const RUNBOOK = "# Payments on-call\n\n1. Check the dashboards.\n";

interface Body {
  event: string;
  session_id: string;
  to: string[];
  waiting_on: string[];
  from: string;
}

class Receiver {
  readonly got: { delivery: string; body: Body }[] = [];
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      this.got.push({
        delivery: String(req.headers["x-baton-delivery"]),
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body,
      });
      res.writeHead(200);
      res.end("ok");
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
  escalated(sessionId: string) {
    return this.got.filter((g) => g.body.event === "offer.escalated" && g.body.session_id === sessionId);
  }
}

const receiver = new Receiver();
let dir: string;
let env: Record<string, string>;
let running: RunningConsole;

function start(): Promise<RunningConsole> {
  const accounts = new Accounts({ usersFile: path.join(dir, "users.json"), loginSecret: SECRET, scrypt: TEST_SCRYPT, logger: quiet });
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

/** Alice hands off to Bob (lead approval by Carol) with a runbook; the session id. */
async function handOff(alice: Browser): Promise<string> {
  return (await handOffWithId(alice)).sessionId;
}

async function handOffWithId(alice: Browser): Promise<{ sessionId: string; handoffId: string }> {
  const a = alice.actions();
  const s = ok(
    await a.startSession({
      messageId: uuid(),
      kind: SessionKind.HANDOFF,
      intent: "payments-api primary on-call",
      participants: ["human:bob"],
      policy: PolicyChoice.LEAD_APPROVAL,
      approvers: ["human:carol"],
      ttlMs: 3_600_000,
    }),
  );
  const o = ok(
    await a.offer({
      sessionId: s.sessionId,
      messageId: uuid(),
      target: "human:bob",
      scope: "payments-api primary on-call",
      reason: "end of my rotation",
    }),
  );
  ok(
    await a.attachContext({
      sessionId: s.sessionId,
      messageId: uuid(),
      handoffId: o.handoffId,
      content: { case: "markdown", value: RUNBOOK },
    }),
  );
  return { sessionId: s.sessionId, handoffId: o.handoffId };
}

const CHAIN = (notifyAfter: number, reofferAfter: number) => [
  { kind: EscalationStepKind.NOTIFY, afterMinutes: notifyAfter, participants: ["human:carol"] },
  { kind: EscalationStepKind.REOFFER, afterMinutes: reofferAfter, participants: ["human:dave"] },
];

async function escalation(b: Browser, sessionId: string): Promise<Escalation | undefined> {
  const r = await b.actions().getEscalation({ sessionId });
  return r.found ? r.escalation : undefined;
}

async function until(b: Browser, sessionId: string, state: EscalationState, timeoutMs = 15_000): Promise<Escalation> {
  let last: Escalation | undefined;
  await waitFor(
    async () => {
      last = await escalation(b, sessionId);
      return last?.state === state;
    },
    timeoutMs,
    `escalation state ${EscalationState[state]} (now ${last ? EscalationState[last.state] : "none"})`,
  );
  return last as Escalation;
}

function kernel() {
  const rt = running.runtime;
  if (!rt) throw new Error("no embedded runtime");
  return rt.kernel;
}

beforeAll(async () => {
  await receiver.start();
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-escalation-"));
  const usersFile = path.join(dir, "users.json");
  await ensureBootstrapAdmin(usersFile, { scrypt: TEST_SCRYPT });
  await addPeople(usersFile, PEOPLE);
  await writeFile(
    path.join(dir, "webhooks.json"),
    JSON.stringify({
      webhooks: [{ id: "oncall", url: `${receiver.url}/hook`, secret: "escalation-test-secret-0123456789", events: ["offer.escalated"] }],
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
    BATON_ESCALATION_MINUTE_MS: String(MINUTE_MS),
  };
  running = await start();
}, 60_000);

afterAll(async () => {
  await running?.close();
  await receiver.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("escalation chains", () => {
  it("fires after its timeout: the approver is told, then the handoff goes to the next person as the owner, with the runbook", async () => {
    const [alice, dave, carol] = await Promise.all([as("alice"), as("dave"), as("carol")]);
    const carolInbox = watchInbox(carol);
    // The chain's first step counts from the offer (the scheduler's nextAt is offeredAt + its minutes),
    // so the lower bound of when it is done starts before the hand-off, not at the escalation request.
    const beforeOffer = Date.now();
    const sid = await handOff(alice);
    const t0 = Date.now();
    const set = await alice.actions().startEscalation({ sessionId: sid, steps: CHAIN(1, 1) });
    expect(set.state).toBe(EscalationState.PENDING);
    expect(Number(set.nextAtUnixMs)).toBeGreaterThanOrEqual(t0 - 1_000 + MINUTE_MS);
    // The same request again (a retried click) answers the chain kept.
    expect((await alice.actions().startEscalation({ sessionId: sid, steps: CHAIN(1, 1) })).originSessionId).toBe(sid);

    const done = await until(alice, sid, EscalationState.DONE);
    expect(Date.now() - beforeOffer).toBeGreaterThanOrEqual(2 * MINUTE_MS - 50);
    expect(done.done.map((a) => a.kind)).toEqual([EscalationStepKind.NOTIFY, EscalationStepKind.REOFFER]);
    // Step 1: offer.escalated to Carol, waiting on Bob, from Alice.
    await waitFor(() => receiver.escalated(sid).length === 1, 10_000, "offer.escalated delivered");
    expect(receiver.escalated(sid)[0]?.body).toMatchObject({ to: ["human:carol"], waiting_on: ["human:bob"], from: "human:alice" });
    // Step 2: the unanswered session closed by Alice, a new one with the offer to Dave and the runbook, all as Alice.
    const reoffer = done.done[1]!;
    expect(reoffer.cancelledSessionId).toBe(sid);
    expect(kernel().getSession(sid)?.metadata.state).toBe(SessionState.CANCELLED);
    const next = reoffer.sessionId;
    expect(done.sessionId).toBe(next);
    expect(done.sessionIds).toEqual([sid, next]);
    const envs = await collectEnvelopes(clientFor({ url: running.runtime!.url }, "baton:console"), next, 4, { timeoutMs: 1_000 });
    expect(envs.map((e) => e.messageType)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext"]);
    expect(envs.every((e) => e.sender === "human:alice")).toBe(true);
    expect(envs.map((e) => e.messageId)).toEqual(reoffer.messageIds);
    expect(fromBinary(HandoffOfferPayloadSchema, envs[1]!.payload)).toMatchObject({
      targetParticipant: "human:dave",
      scope: "payments-api primary on-call",
    });
    expect(new TextDecoder().decode(fromBinary(HandoffContextPayloadSchema, envs[2]!.payload).context)).toBe(RUNBOOK);
    expect(kernel().getSession(next)?.metadata.policyVersion).toBe(kernel().getSession(sid)?.metadata.policyVersion);
    // The chain is found from either session, and Dave can answer the new offer.
    expect((await escalation(dave, next))?.originSessionId).toBe(sid);
    ok(await dave.actions().accept({ sessionId: next, messageId: uuid(), handoffId: reoffer.messageIds[1]!, reason: "" }));
    // Carol's inbox had the unanswered offer while the chain waited on Bob, and not after the re-offer closed it.
    const seen = carolInbox.updates.flat().filter((i) => i.sessionId === sid && i.kind === InboxItemKind.ESCALATION);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]?.summary).toBe(
      "Alice Ng's offer of payments-api primary on-call to Bob Ito is unanswered; Baton told you for Alice Ng.",
    );
    await waitFor(() => !(carolInbox.latest ?? []).some((i) => i.sessionId === sid), 5_000, "the escalation item gone from Carol's inbox");
    await carolInbox.stop();
  }, 30_000);

  it("stops as soon as the offer is answered", async () => {
    const [alice, bob] = await Promise.all([as("alice"), as("bob")]);
    const sid = await handOff(alice);
    await alice.actions().startEscalation({ sessionId: sid, steps: CHAIN(5, 1) });
    ok(await bob.actions().accept({ sessionId: sid, messageId: uuid(), handoffId: "", reason: "on it" }));
    const stopped = await until(alice, sid, EscalationState.STOPPED, 5_000);
    expect(stopped.detail).toBe("Bob Ito accepted the offer.");
    expect(stopped.done).toEqual([]);
    await new Promise((r) => setTimeout(r, 6 * MINUTE_MS + 500));
    expect(receiver.escalated(sid)).toEqual([]);
    expect(kernel().getSession(sid)?.metadata.state).toBe(SessionState.OPEN);
  }, 30_000);

  it("is cancelled by its owner only; a cancelled chain does nothing", async () => {
    const [alice, bob] = await Promise.all([as("alice"), as("bob")]);
    const sid = await handOff(alice);
    // The first step is due 8 chain minutes (3.2 s) after the offer: the refusals and the cancel below
    // must all come before it, also on a loaded machine (with 3 minutes, 1.2 s, they sometimes did not).
    const set = await alice.actions().startEscalation({ sessionId: sid, steps: CHAIN(8, 1) });
    const firstDue = Number(set.nextAtUnixMs);
    await expect(bob.actions().cancelEscalation({ sessionId: sid })).rejects.toThrow(/Only the person who set up this escalation/);
    // Without the CSRF token, refused too.
    alice.csrfOverride = "";
    await expect(alice.actions().cancelEscalation({ sessionId: sid })).rejects.toThrow(ConnectError);
    alice.csrfOverride = undefined;
    expect((await escalation(alice, sid))?.state).toBe(EscalationState.PENDING);
    await alice.actions().cancelEscalation({ sessionId: sid });
    // The cancel came before the first step was due (else this test would not test a cancelled chain).
    expect(Date.now()).toBeLessThan(firstDue);
    const c = await escalation(alice, sid);
    expect(c?.state).toBe(EscalationState.CANCELLED);
    expect(c?.detail).toBe("Cancelled by Alice Ng (human:alice).");
    // Past the time both steps would have been done (the second is due one minute after the first).
    await new Promise((r) => setTimeout(r, firstDue + 3 * MINUTE_MS - Date.now()));
    expect((await escalation(alice, sid))?.done).toEqual([]);
    expect(receiver.escalated(sid)).toEqual([]);
    // A second chain on the same session is refused while one is kept.
    await expect(alice.actions().startEscalation({ sessionId: sid, steps: CHAIN(2, 2) })).rejects.toThrow(/already has an escalation/);
  }, 30_000);

  it("refuses what the contract or the protocol refuses", async () => {
    const [alice, bob] = await Promise.all([as("alice"), as("bob")]);
    const sid = await handOff(alice);
    await expect(alice.actions().startEscalation({ sessionId: sid, steps: [] })).rejects.toThrow(/steps: is required/);
    await expect(
      alice
        .actions()
        .startEscalation({ sessionId: sid, steps: [{ kind: EscalationStepKind.REOFFER, afterMinutes: 1, participants: ["human:bob"] }] }),
    ).rejects.toThrow(/already has the offer/);
    await expect(
      alice
        .actions()
        .startEscalation({ sessionId: sid, steps: [{ kind: EscalationStepKind.NOTIFY, afterMinutes: 0, participants: ["human:carol"] }] }),
    ).rejects.toThrow(/after_minutes/);
    await expect(bob.actions().startEscalation({ sessionId: sid, steps: CHAIN(1, 1) })).rejects.toThrow(/Only the session's owner/);
  });

  it("survives a console restart: an overdue step runs once after it; a step re-run after a crash sends nothing twice", async () => {
    let alice = await as("alice");
    const { sessionId: sid, handoffId } = await handOffWithId(alice);
    await alice.actions().startEscalation({ sessionId: sid, steps: CHAIN(3, 1) });
    const sessionsBefore = kernel().listSessions().length;
    await running.close();
    // Stopped past the first step's time.
    await new Promise((r) => setTimeout(r, 4 * MINUTE_MS));
    running = await start();
    alice = await as("alice");
    const done = await until(alice, sid, EscalationState.DONE);
    await waitFor(() => receiver.escalated(sid).length === 1, 10_000, "offer.escalated after the restart");
    expect(kernel().listSessions().length).toBe(sessionsBefore + 1);

    // A crash after the re-offer was sent and before it was recorded: the step is run again at the next start.
    await running.close();
    const store = new EscalationStore(path.join(dir, "escalations.sqlite"));
    const rec = store.get(sid)!;
    const undone = rec.done.slice(0, 1);
    // As it was just before the re-offer was recorded: in flight, watching Bob's offer in the (already cancelled) first session.
    store.put({
      ...rec,
      state: "pending",
      nextStep: 1,
      nextAtMs: Date.now() - 1,
      inflight: true,
      done: undone,
      sessionId: sid,
      sessionIds: [sid],
      target: "human:bob",
      handoffId,
      detail: "",
    });
    store.close();
    running = await start();
    alice = await as("alice");
    const again = await until(alice, sid, EscalationState.DONE);
    expect(again.done[1]?.sessionId).toBe(done.done[1]?.sessionId);
    expect(again.done[1]?.messageIds).toEqual(done.done[1]?.messageIds);
    expect(kernel().listSessions().length).toBe(sessionsBefore + 1);
    const envs = await collectEnvelopes(clientFor({ url: running.runtime!.url }, "baton:console"), again.sessionId, 4, {
      timeoutMs: 1_000,
    });
    expect(envs.map((e) => e.messageType)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext"]);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.escalated(sid)).toHaveLength(1);
  }, 60_000);
});
