// Slow and silent connections on the console's HTTP server (issue 10, item
// 7): a request that trickles in (one byte, or a body a byte at a time) or a
// socket that says nothing is closed after a bounded time, one address cannot
// hold more than its share of connections, and long-lived Connect streams,
// which send heartbeats, are not cut.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConsoleConfig } from "@/lib/server/config";
import { signedIn, startTestConsole, type TestConsole } from "./actions-harness";

let tc: TestConsole;
let port: number;

beforeAll(async () => {
  tc = await startTestConsole([{ username: "victor", role: "viewer", name: "Victor Viewer" }], {
    BATON_HEADERS_TIMEOUT_MS: "300",
    BATON_REQUEST_TIMEOUT_MS: "600",
    BATON_HEARTBEAT_MS: "200",
    BATON_IDLE_TIMEOUT_MS: "800",
    BATON_MAX_CONNECTIONS_PER_ADDRESS: "6",
  });
  port = Number(new URL(tc.url).port);
});

afterAll(async () => {
  await tc?.close();
});

interface Conn {
  socket: net.Socket;
  received: string;
  /** Resolves with ms since connect when the server closes the connection, or null after `withinMs`. */
  closed(withinMs: number): Promise<number | null>;
}

function connect(): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const t0 = Date.now();
    let closedAt: number | null = null;
    const waiters: (() => void)[] = [];
    const conn: Conn = {
      socket,
      received: "",
      closed: (withinMs) =>
        new Promise((done) => {
          if (closedAt !== null) return done(closedAt);
          const timer = setTimeout(() => done(null), withinMs);
          waiters.push(() => {
            clearTimeout(timer);
            done(closedAt);
          });
        }),
    };
    socket.on("data", (d) => (conn.received += d.toString("latin1")));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      closedAt = Date.now() - t0;
      for (const w of waiters.splice(0)) w();
    });
    socket.once("connect", () => resolve(conn));
    socket.once("error", reject);
  });
}

describe("slow and silent connections", () => {
  it("closes a connection that sent one byte and nothing more", async () => {
    const c = await connect();
    c.socket.write("P");
    const after = await c.closed(5_000);
    expect(after, "still open after 5 s").not.toBeNull();
    expect(c.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes a sign-in POST whose body arrives a byte at a time", async () => {
    const c = await connect();
    c.socket.write(
      `POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{`,
    );
    const drip = setInterval(() => {
      if (!c.socket.destroyed) c.socket.write(" ");
    }, 50);
    try {
      const after = await c.closed(5_000);
      expect(after, "still open after 5 s").not.toBeNull();
      expect(c.received).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(drip);
    }
  });

  it("closes a Connect POST whose body never ends", async () => {
    const c = await connect();
    c.socket.write(
      `POST /baton.v1.ConsoleService/GetGatewayStats HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`,
    );
    const drip = setInterval(() => {
      if (!c.socket.destroyed) c.socket.write("1");
    }, 50);
    try {
      expect(await c.closed(5_000), "still open after 5 s").not.toBeNull();
    } finally {
      clearInterval(drip);
    }
  });

  it("closes a connection that never says anything", async () => {
    const c = await connect();
    expect(await c.closed(5_000), "still open after 5 s").not.toBeNull();
  });

  it("keeps a live WatchSessionChanges stream open far beyond every timeout: heartbeats keep it busy", async () => {
    const viewer = await signedIn(tc, "victor");
    const ac = new AbortController();
    let heartbeats = 0;
    let ended: unknown = null;
    const done = (async () => {
      try {
        for await (const m of viewer.console().watchSessionChanges({}, { signal: ac.signal }))
          if (m.item.case === "heartbeat") heartbeats++;
      } catch (e) {
        if (!ac.signal.aborted) ended = e;
      }
    })();
    // 2.5 s: four request timeouts and three idle timeouts.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(ended).toBeNull();
    expect(heartbeats).toBeGreaterThanOrEqual(5);
    ac.abort();
    await done;
  });

  it("bounds the connections one address may hold", async () => {
    const held = await Promise.all(Array.from({ length: 6 }, () => connect()));
    // Keep them from idling out while the test runs.
    const keep = setInterval(() => held.forEach((c) => c.socket.write("G")), 100);
    try {
      const extra = await connect();
      expect(await extra.closed(1_000), "the 7th connection was not refused").not.toBeNull();
      expect(extra.received).toBe("");
    } finally {
      clearInterval(keep);
      for (const c of held) c.socket.destroy();
    }
    // Once they are gone, the address is welcome again.
    await new Promise((r) => setTimeout(r, 100));
    const res = await fetch(`${tc.url}/auth/methods`);
    expect(res.status).toBe(200);
  });
});

describe("connection limits configuration", () => {
  it("has safe defaults, follows the heartbeat, and refuses an idle timeout that would cut streams", () => {
    expect(loadConsoleConfig({}, [], "/repo").connections).toEqual({
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 40_000,
      maxPerAddress: 64,
    });
    expect(loadConsoleConfig({ BATON_HEARTBEAT_MS: "60000" }, [], "/repo").connections.idleTimeoutMs).toBe(130_000);
    expect(loadConsoleConfig({ BATON_TRUST_PROXY: "1" }, [], "/repo").connections.maxPerAddress).toBe(0);
    expect(() => loadConsoleConfig({ BATON_IDLE_TIMEOUT_MS: "20000", BATON_HEARTBEAT_MS: "15000" }, [], "/repo")).toThrow(
      /BATON_IDLE_TIMEOUT_MS/,
    );
    expect(() => loadConsoleConfig({ BATON_REQUEST_TIMEOUT_MS: "1000", BATON_HEADERS_TIMEOUT_MS: "5000" }, [], "/repo")).toThrow(
      /BATON_REQUEST_TIMEOUT_MS/,
    );
  });
});
