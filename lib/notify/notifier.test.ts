// The notifier against a real in-memory catalog and a real HTTP receiver on
// loopback: baseline, idempotent re-reads, filters, per-request timeout,
// permanent refusals, giving up, and one request at a time per hook.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import { silentLogger } from "@/lib/gateway/logger";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import type { WebhookConfig } from "./config";
import { Notifier } from "./notifier";
import { NotifyStore } from "./outbox";

type Answer = (n: number) => number | "hang";

async function receiver(answer: Answer) {
  const got: { path: string; event: string; delivery: string; session: string }[] = [];
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { session_id: string };
      got.push({
        path: req.url ?? "",
        event: String(req.headers["x-baton-event"]),
        delivery: String(req.headers["x-baton-delivery"]),
        session: body.session_id,
      });
      const a = answer(got.length);
      const done = () => void open--;
      if (a === "hang") {
        res.on("close", done);
        return;
      }
      setTimeout(() => {
        res.writeHead(a);
        res.end();
        done();
      }, 30);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    got,
    get maxOpen() {
      return maxOpen;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function summary(id: string, phase: string, target: string, state = SessionState.OPEN) {
  return create(SessionSummarySchema, {
    metadata: { sessionId: id, mode: HANDOFF_MODE, state, initiator: "human:alice", participants: ["human:alice", "human:bob"] },
    phase,
    currentOwner: "human:alice",
    currentTarget: target,
    scope: "db on-call",
    lastActivityUnixMs: BigInt(Date.now()),
  });
}

const hook = (id: string, url: string, extra: Partial<WebhookConfig> = {}): WebhookConfig => ({
  id,
  url,
  format: "generic",
  secret: "0123456789abcdef",
  events: null,
  participants: null,
  ...extra,
});

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function setup(hooks: WebhookConfig[], extra: Partial<ConstructorParameters<typeof Notifier>[0]> = {}) {
  const catalog = new SqliteCatalog({ path: ":memory:" });
  const store = new NotifyStore(":memory:");
  const listeners = new Set<() => void>();
  const notifier = new Notifier({
    hooks,
    store,
    catalog,
    catalogId: "test",
    onCatalogWrite: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    approvers: async () => [],
    names: async () => new Map(),
    publicUrl: "http://console.test",
    logger: silentLogger,
    retryBaseMs: 20,
    retryCapMs: 100,
    ...extra,
  });
  const write = (...rows: ReturnType<typeof summary>[]) => {
    catalog.write(rows.map((s) => ({ summary: s, folded: 1, final: false, needsRead: false, nextActors: [] })));
    for (const l of listeners) l();
  };
  cleanup.push(() => catalog.close());
  cleanup.push(() => notifier.close());
  return { catalog, store, notifier, write };
}

const until = async (cond: () => boolean, what: string, ms = 5_000) => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("Notifier", () => {
  it("takes what is there as the baseline, then tells each change once, filtered per hook", async () => {
    const rx = await receiver(() => 200);
    cleanup.push(rx.close);
    const { notifier, write } = setup([
      hook("all", `${rx.url}/all`),
      hook("declines", `${rx.url}/declines`, { events: new Set(["offer.declined"]) }),
      hook("carol", `${rx.url}/carol`, { participants: new Set(["human:carol"]) }),
    ]);
    write(summary("old", "OfferPending", "human:bob"));
    notifier.start();
    write(summary("s1", "OfferPending", "human:bob"));
    await until(() => rx.got.length >= 1, "the first event");
    write(summary("s1", "OfferPending", "human:bob"), summary("old", "OfferPending", "human:bob")); // re-written, unchanged
    write(summary("s1", "Declined", "human:bob"));
    await until(() => rx.got.length >= 3, "the decline at two hooks");
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.got.map((g) => `${g.path} ${g.event} ${g.session}`).sort()).toEqual([
      "/all offer.declined s1",
      "/all offer.waiting s1",
      "/declines offer.declined s1",
    ]);
    expect(rx.got.filter((g) => g.path === "/all").map((g) => g.event)).toEqual(["offer.waiting", "offer.declined"]);
  });

  it("cuts a request that hangs, retries with backoff, and gives up on a 4xx refusal at once", async () => {
    const rx = await receiver((n) => (n === 1 ? "hang" : n === 2 ? 200 : 404));
    cleanup.push(rx.close);
    const { notifier, store, write } = setup([hook("h", `${rx.url}/h`)], { timeoutMs: 200 });
    notifier.start();
    write(summary("s1", "OfferPending", "human:bob"));
    await until(() => rx.got.length >= 2, "the retry after the timeout");
    expect(rx.got[0]?.delivery).toBe(rx.got[1]?.delivery);
    await until(() => store.recent("h", 1)[0]?.status === "delivered", "delivered");
    expect(store.recent("h", 1)[0]).toMatchObject({ attempts: 2, lastStatus: 200 });
    write(summary("s1", "Declined", "human:bob"));
    await until(() => store.recent("h", 1)[0]?.event === "offer.declined" && store.recent("h", 1)[0]?.status === "failed", "refused");
    expect(store.recent("h", 1)[0]).toMatchObject({ attempts: 1, lastStatus: 404, lastError: "HTTP 404" });
    expect(notifier.status()[0]).toMatchObject({ id: "h", pending: 0, failed: 1, destination: rx.url });
  });

  it("gives a delivery up once it is older than the window", async () => {
    const rx = await receiver(() => 503);
    cleanup.push(rx.close);
    const { notifier, store, write } = setup([hook("h", `${rx.url}/h`)], { giveUpAfterMs: 300 });
    notifier.start();
    write(summary("s1", "OfferPending", "human:bob"));
    await until(() => store.recent("h", 1)[0]?.status === "failed", "given up", 5_000);
    const row = store.recent("h", 1)[0];
    expect(row?.attempts).toBeGreaterThan(1);
    expect(row?.lastError).toBe("HTTP 503");
  });

  it("sends one request at a time per hook, in order", async () => {
    const rx = await receiver(() => 200);
    cleanup.push(rx.close);
    const { notifier, write } = setup([hook("h", `${rx.url}/h`)]);
    notifier.start();
    for (let i = 0; i < 8; i++) write(summary(`s${i}`, "OfferPending", "human:bob"));
    await until(() => rx.got.length === 8, "eight events");
    expect(rx.maxOpen).toBe(1);
    expect(rx.got.map((g) => `${g.event} ${g.session}`)).toEqual(Array.from({ length: 8 }, (_, i) => `offer.waiting s${i}`));
  });
});
