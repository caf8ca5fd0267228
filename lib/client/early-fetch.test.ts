// Early requests against a real HTTP server: sent once, taken over by the
// first fetch with the same URL and body, aborted with its taker, or when
// nobody takes them; the page element that carries them.
import http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  claimEarlyFetch,
  dropEarlyFetches,
  EARLY_REQUEST_ATTRIBUTE,
  EARLY_REQUEST_ELEMENT,
  MAX_PENDING,
  parseEarlyRequest,
  pendingEarlyFetches,
  startEarlyFetch,
  startEarlyFetchOfPage,
  UNCLAIMED_MS,
  type EarlyRequest,
} from "./early-fetch";

let server: http.Server;
let origin: string;
/** Requests the server saw: URL, body, and whether the client went away before the answer ended. */
const seen: { url: string; body: string; header: string | undefined; closed: boolean }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = {
        url: req.url ?? "",
        body: Buffer.concat(chunks).toString("base64"),
        header: req.headers["x-test"] as string | undefined,
        closed: false,
      };
      seen.push(entry);
      res.on("close", () => {
        if (!res.writableEnded) entry.closed = true;
      });
      // A stream: the first part at once, the rest never (until the client leaves).
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.write(`answer to ${entry.body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

afterEach(() => {
  dropEarlyFetches();
  seen.length = 0;
  vi.useRealTimers();
});

const request = (body: number[]): EarlyRequest => ({
  url: "/svc/Method",
  headers: { "x-test": "early" },
  body: Buffer.from(body).toString("base64"),
});

async function firstText(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  await reader.cancel();
  return new TextDecoder().decode(value);
}

const until = async (f: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(f()).toBe(true);
};

describe("early requests", () => {
  it("are sent once, with their headers, and taken over by the fetch with the same URL and body", async () => {
    startEarlyFetch(request([0, 0, 0, 0, 2, 8, 5]), origin);
    startEarlyFetch(request([0, 0, 0, 0, 2, 8, 5]), origin);
    await until(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ url: "/svc/Method", header: "early" });
    const body = new Uint8Array([0, 0, 0, 0, 2, 8, 5]);
    // Another body or URL, or another method, is not it.
    expect(claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([0, 0, 0, 0, 2, 8, 6]) })).toBeUndefined();
    expect(claimEarlyFetch(`${origin}/svc/Other`, { method: "POST", body })).toBeUndefined();
    expect(claimEarlyFetch(`${origin}/svc/Method`, { method: "GET" })).toBeUndefined();
    const taken = claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body });
    expect(taken).toBeDefined();
    expect(await firstText(await taken!)).toBe(`answer to ${Buffer.from(body).toString("base64")}`);
    // Taken once: the next fetch sends its own request.
    expect(claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body })).toBeUndefined();
    expect(pendingEarlyFetches()).toBe(0);
    expect(seen).toHaveLength(1);
  });

  it("are aborted when their taker's signal is", async () => {
    startEarlyFetch(request([1]), origin);
    const ac = new AbortController();
    const taken = claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([1]), signal: ac.signal });
    const res = await taken!;
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await expect(reader.read()).rejects.toThrow();
    await until(() => seen[0]?.closed === true);
  });

  it("taken with a signal already aborted, fail at once", async () => {
    startEarlyFetch(request([2]), origin);
    const ac = new AbortController();
    ac.abort();
    await expect(
      claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([2]), signal: ac.signal }),
    ).rejects.toThrow();
  });

  it("nobody takes are aborted: after UNCLAIMED_MS, when dropped, and the oldest beyond MAX_PENDING", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    startEarlyFetch(request([3]), origin);
    expect(pendingEarlyFetches()).toBe(1);
    vi.advanceTimersByTime(UNCLAIMED_MS);
    expect(pendingEarlyFetches()).toBe(0);
    vi.useRealTimers();

    for (let i = 0; i < MAX_PENDING + 2; i++) startEarlyFetch(request([10 + i]), origin);
    expect(pendingEarlyFetches()).toBe(MAX_PENDING);
    // The two oldest went: taking them finds nothing; the newest is there.
    expect(claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([10]) })).toBeUndefined();
    expect(claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([11]) })).toBeUndefined();
    const newest = claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([10 + MAX_PENDING + 1]) });
    expect(newest).toBeDefined();
    await (await newest!).body?.cancel();
    dropEarlyFetches();
    expect(pendingEarlyFetches()).toBe(0);
    // Every request the server answered and nobody read to its end was closed by the client.
    await until(() => seen.length > 0 && seen.every((s) => s.closed));
  });
});

describe("the page's request", () => {
  it("round-trips as JSON", () => {
    const req: EarlyRequest = { url: "/svc/Method", headers: { "content-type": "application/connect+proto" }, body: "AAAAAAIIBQ==" };
    expect(parseEarlyRequest(JSON.stringify(req))).toEqual(req);
  });

  it.each([
    ["nothing", null],
    ["not JSON", "{"],
    ["not an object", "[1]"],
    ["another origin", JSON.stringify({ url: "//evil.test/x", headers: {}, body: "" })],
    ["an absolute URL", JSON.stringify({ url: "https://evil.test/x", headers: {}, body: "" })],
    ["a body that is not base64", JSON.stringify({ url: "/x", headers: {}, body: "a b" })],
    ["a header that is not a string", JSON.stringify({ url: "/x", headers: { a: 1 }, body: "" })],
  ])("is ignored when it holds %s", (_, text) => {
    expect(parseEarlyRequest(text)).toBeUndefined();
  });

  it("never sends to another origin", async () => {
    startEarlyFetch({ url: "/svc/Method", headers: {}, body: "AQ==" }, origin);
    expect(pendingEarlyFetches()).toBe(1);
    const fetchFn = vi.fn(globalThis.fetch);
    startEarlyFetch({ url: "http://elsewhere.test/svc/Method", headers: {}, body: "AQ==" }, origin, fetchFn);
    expect(fetchFn).not.toHaveBeenCalled();
    expect(pendingEarlyFetches()).toBe(1);
  });
});

describe("startEarlyFetchOfPage", () => {
  const page = (text: string | null): Document =>
    ({
      getElementById: (id: string) =>
        id === EARLY_REQUEST_ELEMENT && text !== null
          ? { getAttribute: (name: string) => (name === EARLY_REQUEST_ATTRIBUTE ? text : null) }
          : null,
    }) as unknown as Document;

  it("sends the request the page carries", async () => {
    startEarlyFetchOfPage(page(JSON.stringify({ url: "/svc/Method", headers: { "x-test": "block" }, body: "Bw==" })), origin);
    await until(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ url: "/svc/Method", header: "block", body: "Bw==" });
    expect(claimEarlyFetch(`${origin}/svc/Method`, { method: "POST", body: new Uint8Array([7]) })).toBeDefined();
  });

  it("sends nothing for a page without one, or with one that does not check out", () => {
    startEarlyFetchOfPage(page(null), origin);
    startEarlyFetchOfPage(page('{"url":"https://evil.test/","headers":{},"body":""}'), origin);
    expect(pendingEarlyFetches()).toBe(0);
  });
});
