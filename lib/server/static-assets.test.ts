// The pre-compressed /_next/static server on a real HTTP server, with files
// compressed by the build's own step (scripts/build.mjs compressStatic).
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- plain ESM script without type declarations
import { compressStatic } from "@/scripts/build.mjs";
import { createStaticAssets } from "./static-assets";

let dir: string;
let server: http.Server;
let base: string;
const js = `export const words = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `word number ${i}`))};\n`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-static-"));
  fs.mkdirSync(path.join(dir, "chunks", "app", "sessions", "[id]"), { recursive: true });
  fs.writeFileSync(path.join(dir, "chunks", "main-abc123.js"), js);
  fs.writeFileSync(path.join(dir, "chunks", "app", "sessions", "[id]", "page-def456.js"), js);
  fs.writeFileSync(path.join(dir, "chunks", "tiny-1.js"), "x=1\n");
  fs.writeFileSync(path.join(dir, "font-9.woff2"), Buffer.alloc(2048, 7));
  const totals = await (compressStatic as (d: string) => Promise<{ files: number; br: number; identity: number }>)(dir);
  expect(totals.files).toBe(3);
  expect(totals.br).toBeLessThan(totals.identity);
  const assets = createStaticAssets({ dir });
  server = http.createServer((req, res) => {
    if (assets(req, res)) return;
    res.writeHead(418);
    res.end("passed on");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A plain request (no automatic decompression, unlike fetch). */
function get(p: string, headers: Record<string, string> = {}, method = "GET"): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${p}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

const IMMUTABLE = "public, max-age=31536000, immutable";

describe("pre-compressed static files", () => {
  it("serves brotli, gzip or the file itself by Accept-Encoding, with cache headers", async () => {
    const br = await get("/_next/static/chunks/main-abc123.js", { "accept-encoding": "gzip, deflate, br, zstd" });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(br.headers["cache-control"]).toBe(IMMUTABLE);
    expect(br.headers.vary).toBe("Accept-Encoding");
    expect(Number(br.headers["content-length"])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(js.length / 3);
    expect(zlib.brotliDecompressSync(br.body).toString()).toBe(js);

    const gz = await get("/_next/static/chunks/main-abc123.js", { "accept-encoding": "gzip;q=1, br;q=0.5" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(zlib.gunzipSync(gz.body).toString()).toBe(js);
    expect(gz.headers.etag).not.toBe(br.headers.etag);

    const asks: Record<string, string>[] = [{}, { "accept-encoding": "identity" }, { "accept-encoding": "br;q=0, gzip;q=0" }];
    for (const h of asks) {
      const plain = await get("/_next/static/chunks/main-abc123.js", h);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.headers["cache-control"]).toBe(IMMUTABLE);
      expect(plain.body.toString()).toBe(js);
      expect(Number(plain.headers["content-length"])).toBe(js.length);
    }
  });

  it("decodes escaped paths (route folders like [id])", async () => {
    const r = await get("/_next/static/chunks/app/sessions/%5Bid%5D/page-def456.js", { "accept-encoding": "br" });
    expect(r.status).toBe(200);
    expect(zlib.brotliDecompressSync(r.body).toString()).toBe(js);
  });

  it("answers HEAD with the headers only and 304 for a matching If-None-Match", async () => {
    const head = await get("/_next/static/chunks/main-abc123.js", { "accept-encoding": "gzip" }, "HEAD");
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers["content-encoding"]).toBe("gzip");
    const full = await get("/_next/static/chunks/main-abc123.js", { "accept-encoding": "gzip" });
    expect(Number(head.headers["content-length"])).toBe(full.body.length);
    const again = await get("/_next/static/chunks/main-abc123.js", {
      "accept-encoding": "gzip",
      "if-none-match": `W/${String(head.headers.etag)}`,
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers["cache-control"]).toBe(IMMUTABLE);
    // Another encoding is another representation: no 304 for the gzip tag.
    const other = await get("/_next/static/chunks/main-abc123.js", { "accept-encoding": "br", "if-none-match": String(head.headers.etag) });
    expect(other.status).toBe(200);
    expect(other.headers["content-encoding"]).toBe("br");
  });

  it("serves small and incompressible files as they are, without Vary", async () => {
    const tiny = await get("/_next/static/chunks/tiny-1.js", { "accept-encoding": "br, gzip" });
    expect(tiny.headers["content-encoding"]).toBeUndefined();
    expect(tiny.headers.vary).toBeUndefined();
    expect(tiny.body.toString()).toBe("x=1\n");
    const font = await get("/_next/static/font-9.woff2", { "accept-encoding": "br, gzip" });
    expect(font.headers["content-type"]).toBe("font/woff2");
    expect(font.headers["content-encoding"]).toBeUndefined();
    expect(font.body.length).toBe(2048);
  });

  it("never serves a variant older than its file", async () => {
    const file = path.join(dir, "chunks", "stale-2.js");
    fs.writeFileSync(file, js);
    await (compressStatic as (d: string) => Promise<unknown>)(dir);
    const later = Date.now() / 1000 + 5;
    fs.writeFileSync(file, js.replace("word", "WORD"));
    fs.utimesSync(file, later, later);
    const r = await get("/_next/static/chunks/stale-2.js", { "accept-encoding": "br, gzip" });
    expect(r.headers["content-encoding"]).toBeUndefined();
    expect(r.body.toString()).toContain("WORD");
  });

  it("passes on what it does not serve: other paths, methods, missing files, traversal, variants", async () => {
    for (const p of [
      "/_next/static/chunks/missing.js",
      "/_next/static/chunks/main-abc123.js.br",
      "/_next/static/..%2F..%2Fetc%2Fpasswd",
      "/_next/static/%E0%A4%A",
      "/_next/static/",
      "/sessions",
    ]) {
      expect((await get(p)).status, p).toBe(418);
    }
    expect((await get("/_next/static/chunks/main-abc123.js", {}, "POST")).status).toBe(418);
  });
});
