// Shared by the gateway-*.test.ts files, which test the gateway against an in-memory fake
// runtime through the Connect routes mounted in createRouterTransport: setup, sign-in, waiting,
// and collecting browser streams.
import fs from "node:fs";
import { ConnectError, type Code, createClient, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import {
  ConsoleService,
  type SessionSummary,
  type SubscribeSessionResponse,
  type WatchSessionChangesResponse,
  type WatchSessionListResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { createGateway, type Gateway, type GatewayOptions } from "../gateway";
import type { Authenticated } from "@/lib/accounts/accounts";
import type { Principal } from "@/lib/accounts/logins";
import { kSignedIn } from "../request-auth";
import { consoleRoutes } from "../routes";
import type { FakeRuntime } from "../testing/fake-runtime";

const gateways: Gateway[] = [];
export const dirs: string[] = [];
/** Closes the gateways and removes the folders a test made; every gateway-*.test.ts runs it afterEach. */
export function cleanUp(): void {
  for (const g of gateways.splice(0)) g.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export function setup(rt: FakeRuntime, opts: Partial<GatewayOptions> & { person?: string } = {}) {
  const { person, ...rest } = opts;
  const gw = createGateway({ runtime: rt, flushMs: 5, heartbeatMs: 60_000, ...rest });
  gateways.push(gw);
  // The reader the console's access interceptor would have signed in (request-auth.ts).
  const interceptors: Interceptor[] = person ? [(next) => (req) => next((req.contextValues.set(kSignedIn, signedIn(person)), req))] : [];
  const client = createClient(ConsoleService, createRouterTransport(consoleRoutes(gw), { router: { interceptors } }));
  return { gw, client };
}

export function signedIn(username: string): Authenticated {
  const user: Principal = {
    username,
    displayName: username,
    role: "viewer",
    participantId: `human:${username}`,
    authMethod: "password",
    ephemeral: false,
  };
  return {
    login: {
      id: `login-${username}`,
      key: `key-${username}`,
      principal: user,
      csrfToken: "",
      createdAt: 0,
      lastSeenAt: 0,
      expiresAt: Number.MAX_SAFE_INTEGER,
    },
    user,
    mustChangePassword: false,
  };
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The catalog has read every session it knows. */
export async function settled(gw: Gateway, known: number): Promise<void> {
  await waitFor(() => {
    gw.feeder.flush();
    const st = gw.feeder.status();
    return Number(st.sessionsKnown) === known && !st.backfilling;
  }, `catalog of ${known} sessions`);
}

/** Runs a browser stream in the background, collecting its messages. */
export function run<T>(start: (signal: AbortSignal) => AsyncIterable<T>) {
  const items: T[] = [];
  const ac = new AbortController();
  let error: unknown = null;
  const done = (async () => {
    try {
      for await (const m of start(ac.signal)) items.push(m);
    } catch (e) {
      if (!ac.signal.aborted) error = e;
    }
  })();
  return {
    items,
    get error() {
      return error;
    },
    stop: async () => {
      ac.abort();
      await done;
    },
    done,
  };
}

export function rows(items: WatchSessionListResponse[]): Map<string, SessionSummary> {
  const m = new Map<string, SessionSummary>();
  for (const it of items) {
    if (it.item.case === "snapshot") for (const s of it.item.value.sessions) m.set(s.metadata?.sessionId ?? "", s);
    if (it.item.case === "upsert") m.set(it.item.value.metadata?.sessionId ?? "", it.item.value);
  }
  return m;
}

export const snapshotComplete = (items: WatchSessionListResponse[]) =>
  items.some((i) => i.item.case === "snapshot" && i.item.value.complete);

export const changes = (items: WatchSessionChangesResponse[]) => items.flatMap((i) => (i.item.case === "change" ? [i.item.value] : []));

export function events(items: SubscribeSessionResponse[]) {
  return items.flatMap((i) => (i.item.case === "event" ? [i.item.value] : []));
}

export async function code(p: Promise<unknown> | AsyncIterable<unknown>): Promise<Code | null> {
  try {
    if (p instanceof Promise) await p;
    else for await (const _ of p) void _;
    return null;
  } catch (e) {
    return ConnectError.from(e).code;
  }
}
