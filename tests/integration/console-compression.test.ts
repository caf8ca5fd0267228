// What the console sends compressed and what it never does (issue 14):
//  - a Connect server stream is never compressed, whatever the browser
//    accepts, and each message leaves as soon as it happens (first message
//    within 100 ms of the agent's Ack);
//  - a unary Connect reply of 1 KiB or more is gzipped when accepted;
//  - the production app (`npm start`, which builds when needed) serves its
//    hashed JavaScript pre-compressed (br or gzip by Accept-Encoding, identity
//    otherwise) with immutable cache headers, and its HTML gzipped.
// Requests go through node:http so nothing decompresses behind the test's back.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import zlib from "node:zlib";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { signIn, startApp, type RunningApp } from "@/scripts/bench/web-app";
import { agent, newSessionId } from "./harness";

const OWNER = "agent://owner";
const TARGET = "agent://target";

interface Head {
  status: number;
  headers: http.IncomingHttpHeaders;
}

function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: Buffer },
): Promise<Head & { body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? "GET", headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** One Connect envelope (flags 0) around a JSON message. */
function envelope(json: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(json));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

describe("Connect over the console server", () => {
  let c: RunningConsole;
  beforeAll(async () => {
    const env = {
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_MEMORY_ONLY: "1",
      MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
      MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
      PORT: "0",
      BATON_STREAM_GRACE_MS: "0",
      BATON_REQUIRE_SIGN_IN: "0",
    };
    c = await startConsole({ config: loadConsoleConfig(env, ["--no-ui"], process.cwd()), env, logger: pino({ level: "silent" }) });
  });
  afterAll(async () => {
    await c?.close();
  });

  it("never compresses a server stream, and each message leaves at once", async () => {
    const runtime = { url: c.runtime?.url ?? "" };
    const sessionId = newSessionId();
    const owner = agent(runtime, OWNER, sessionId);
    expect((await owner.start([OWNER, TARGET], { intent: "x".repeat(4_000) })).ok).toBe(true);

    const frames: { at: number; type: string }[] = [];
    let head: Head | null = null;
    let buffered = Buffer.alloc(0);
    const req = http.request(`${c.url}/baton.v1.ConsoleService/SubscribeSession`, {
      method: "POST",
      headers: {
        "content-type": "application/connect+json",
        "connect-protocol-version": "1",
        // Everything a client could ask for: none of it may apply to a stream.
        "accept-encoding": "gzip, deflate, br",
        "connect-accept-encoding": "gzip, br",
      },
    });
    req.on("response", (res) => {
      head = { status: res.statusCode ?? 0, headers: res.headers };
      res.on("data", (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 5) {
          const len = buffered.readUInt32BE(1);
          if (buffered.length < 5 + len) break;
          const msg = JSON.parse(buffered.subarray(5, 5 + len).toString()) as Record<string, unknown>;
          buffered = buffered.subarray(5 + len);
          frames.push({ at: performance.now(), type: Object.keys(msg).find((k) => k !== "sequence") ?? "?" });
        }
      });
    });
    req.end(envelope({ sessionId }));
    const until = async (cond: () => boolean, what: string) => {
      const t0 = Date.now();
      while (!cond()) {
        if (Date.now() - t0 > 5_000) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    try {
      await until(() => frames.some((f) => f.type === "caughtUp"), "caught_up");
      const h = head as Head | null;
      expect(h?.status).toBe(200);
      expect(h?.headers["content-encoding"]).toBeUndefined();
      expect(h?.headers["connect-content-encoding"]).toBeUndefined();
      expect(h?.headers["x-accel-buffering"]).toBe("no");
      const before = frames.length;
      const sentAt = performance.now();
      const ack = await owner.send("HandoffOffer", { handoffId: "h1", targetParticipant: TARGET, scope: "pager", reason: "shift change" });
      expect(ack.ok).toBe(true);
      const ackedAt = performance.now();
      await until(() => frames.slice(before).some((f) => f.type === "event"), "the live event");
      const arrived = frames.slice(before).find((f) => f.type === "event")?.at ?? Infinity;
      // From the Send call (the Ack may even come after the event): ≤ 100 ms.
      expect(arrived - sentAt).toBeLessThan(100);
      expect(arrived - ackedAt).toBeLessThan(100);
    } finally {
      req.destroy();
    }
  });

  it("gzips a unary reply of 1 KiB or more when asked, and only then", async () => {
    const runtime = { url: c.runtime?.url ?? "" };
    const sessionId = newSessionId();
    expect((await agent(runtime, OWNER, sessionId).start([OWNER, TARGET], { intent: "a long intent ".repeat(200) })).ok).toBe(true);
    const call = (acceptEncoding: string | null) =>
      request(`${c.url}/baton.v1.ConsoleService/GetSessionSummary`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          ...(acceptEncoding !== null ? { "accept-encoding": acceptEncoding } : {}),
        },
        body: Buffer.from(JSON.stringify({ sessionId })),
      });
    const gz = await call("gzip, deflate, br, zstd");
    expect(gz.status).toBe(200);
    expect(gz.headers["content-encoding"]).toBe("gzip");
    const json = zlib.gunzipSync(gz.body).toString();
    expect(json.length).toBeGreaterThan(1024);
    expect(gz.body.length).toBeLessThan(json.length / 2);
    for (const refused of [null, "identity", "gzip;q=0, br"]) {
      const plain = await call(refused);
      expect(plain.headers["content-encoding"], String(refused)).toBeUndefined();
      expect(plain.body.toString()).toBe(json);
    }
  });
});

describe("the production app (npm start)", () => {
  let app: RunningApp;
  let cookie = "";
  beforeAll(async () => {
    // Builds first when the build is out of date (as `npm start` does for a person).
    app = await startApp({ root: path.resolve(__dirname, "..", ".."), timeoutMs: 600_000 });
    cookie = (await signIn(app)).map((k) => `${k.name}=${k.value}`).join("; ");
  }, 660_000);
  afterAll(async () => {
    await app?.stop();
  });

  it("serves HTML gzipped and hashed JavaScript pre-compressed, with cache headers", async () => {
    const page = await request(`${app.baseUrl}/inbox`, { headers: { cookie, "accept-encoding": "gzip, deflate, br" } });
    expect(page.status).toBe(200);
    expect(page.headers["content-encoding"]).toBe("gzip");
    const html = zlib.gunzipSync(page.body).toString();
    expect(html).toContain("<html");
    expect(page.body.length).toBeLessThan(html.length / 2);
    const plainPage = await request(`${app.baseUrl}/inbox`, { headers: { cookie } });
    expect(plainPage.headers["content-encoding"]).toBeUndefined();

    const scripts = [...html.matchAll(/src="(\/_next\/static\/[^"]+\.js)"/g)].map((m) => m[1] ?? "");
    expect(scripts.length).toBeGreaterThan(0);
    // The largest one: it certainly has compressed variants.
    const sized = await Promise.all(
      scripts.map(async (s) => ({ s, size: Number((await request(`${app.baseUrl}${s}`, { method: "HEAD" })).headers["content-length"]) })),
    );
    const asset = sized.sort((a, b) => b.size - a.size)[0]?.s ?? "";
    expect(asset).toMatch(/^\/_next\/static\/chunks\/[\w.~-]+\.js$/);
    const plain = await request(`${app.baseUrl}${asset}`, {});
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(plain.headers["content-type"]).toMatch(/^application\/javascript/);
    for (const [accept, coding, decode] of [
      ["gzip, deflate, br, zstd", "br", zlib.brotliDecompressSync],
      ["gzip", "gzip", zlib.gunzipSync],
    ] as const) {
      const r = await request(`${app.baseUrl}${asset}`, { headers: { "accept-encoding": accept } });
      expect(r.headers["content-encoding"]).toBe(coding);
      expect(r.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(r.headers.vary).toBe("Accept-Encoding");
      expect(Number(r.headers["content-length"])).toBe(r.body.length);
      expect(r.body.length).toBeLessThan(plain.body.length / 2);
      expect(decode(r.body).equals(plain.body)).toBe(true);
    }
  });

  it("serves Baton's chunks with the eager compile hint first, the framework's without", async () => {
    const page = await request(`${app.baseUrl}/inbox`, { headers: { cookie } });
    const html = page.body.toString();
    const scripts = [...html.matchAll(/src="(\/_next\/static\/chunks\/[^"]+\.js)"/g)].map((m) => m[1] ?? "");
    const bodies = await Promise.all(
      scripts.map(async (s) => (await request(`${app.baseUrl}${s}`, { headers: { "accept-encoding": "br" } })).body),
    );
    const texts = bodies.map((b) => zlib.brotliDecompressSync(b).toString());
    // React DOM is in the framework's chunks: left to V8's lazy compilation.
    const reactDom = texts.find((t) => t.includes("react-dom") || t.includes("__reactFiber"));
    expect(reactDom).toBeDefined();
    expect(reactDom?.startsWith("//# allFunctionsCalledOnLoad\n")).toBe(false);
    // The session page's live view is loaded on demand; its chunk, as served, starts with the hint.
    const chunks = path.resolve(__dirname, "..", "..", ".next", "static", "chunks");
    const live = fs
      .readdirSync(chunks)
      .filter((f) => f.endsWith(".js") && fs.readFileSync(path.join(chunks, f), "utf8").includes("Printable report"));
    expect(live.length).toBeGreaterThan(0);
    for (const f of live) {
      const r = await request(`${app.baseUrl}/_next/static/chunks/${f}`, { headers: { "accept-encoding": "br" } });
      expect(r.headers["content-encoding"]).toBe("br");
      expect(zlib.brotliDecompressSync(r.body).toString().startsWith("//# allFunctionsCalledOnLoad\n")).toBe(true);
    }
  });
});
