// Shared by the actions-*.test.ts files: signed-in people driving handoffs and tasks through
// the ActionService, end to end, against the real console server and embedded runtime (dev auth,
// memory only), people from a users file, browsers with a cookie and CSRF token, and the session
// history read back from the runtime. Each file starts its own console (useTestConsole).
import { ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, expect } from "vitest";
import { PolicyChoice, SessionKind, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { clientFor, collectEnvelopes } from "../harness";
import { signedIn, startTestConsole, uuid, type Browser, type Person, type TestConsole } from "../actions-harness";

const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng" },
  { username: "bob", role: "operator", name: "Bob Ito" },
  { username: "carol", role: "approver", name: "Carol Lee" },
  { username: "dave", role: "operator", name: "Dave Park" },
  { username: "erin", role: "approver", name: "Erin Diaz" },
  { username: "victor", role: "viewer", name: "Victor Viewer" },
];

export let tc: TestConsole;
export let alice: Browser;
export let bob: Browser;
export let carol: Browser;
export let dave: Browser;
export let erin: Browser;
export let victor: Browser;

/** Starts the console and signs everyone in before a file's tests, and closes it after them. */
export function useTestConsole(): void {
  beforeAll(async () => {
    tc = await startTestConsole(PEOPLE);
    [alice, bob, carol, dave, erin, victor] = await Promise.all([
      signedIn(tc, "alice"),
      signedIn(tc, "bob"),
      signedIn(tc, "carol"),
      signedIn(tc, "dave"),
      signedIn(tc, "erin"),
      signedIn(tc, "victor"),
    ]);
  });

  afterAll(async () => {
    await tc?.close();
  });
}

/** The accepted history of a session, read directly from the runtime as an observer would. */
export async function history(sessionId: string, count: number): Promise<Envelope[]> {
  const rt = tc.console.runtime;
  if (!rt) throw new Error("no embedded runtime");
  return collectEnvelopes(clientFor({ url: rt.url }, "baton:console"), sessionId, count, { timeoutMs: 2_000 });
}

export async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to be refused");
}

export function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

export async function startRotation(): Promise<string> {
  const started = ok(
    await alice.actions().startSession({
      messageId: uuid(),
      kind: SessionKind.HANDOFF,
      intent: "Payments on-call rotation (lead approval)",
      scope: "payments on-call",
      participants: ["human:bob", "human:dave"],
      ttlMs: 3_600_000,
      policy: PolicyChoice.LEAD_APPROVAL,
      approvers: ["human:carol"],
      frozenContextJson: JSON.stringify({ incident: null, week: 32 }),
    }),
  );
  expect(started.policyId).toMatch(/^policy\.baton\.lead-approval\.[0-9a-f]{16}$/);
  expect(started.sessionState).toBe(SessionState.OPEN);
  return started.sessionId;
}
