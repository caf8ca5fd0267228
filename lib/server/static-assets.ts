// `/_next/static/**` served by the console server itself, pre-compressed.
//
// `npm run build` writes `name.br` and `name.gz` next to each compressible
// file of `.next/static` (scripts/build.mjs, after `next build`). Here the
// request's Accept-Encoding (q-values respected) picks one of them, or the
// file itself. Every file under /_next/static has a content hash or the build
// id in its path, so it is cached for a year as immutable. A variant older than
// its file (a build that did not compress again) is never served.
//
// Requests this does not answer (another method, a file that is not there)
// go on to Next.js, which answers them as before (404 for a missing asset).
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { pipeline } from "node:stream";
import { chooseEncoding, type Coding } from "./accept-encoding";

export const STATIC_PREFIX = "/_next/static/";

const TYPES: Record<string, string> = {
  ".js": "application/javascript; charset=utf-8",
  ".mjs": "application/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
};

/** Variant file suffix by coding, as scripts/build.mjs writes them. */
export const VARIANT_SUFFIX: Record<Coding, string> = { br: ".br", gzip: ".gz" };
const CODINGS: readonly Coding[] = ["br", "gzip"];

interface Variant {
  file: string;
  size: number;
  etag: string;
}

interface Entry {
  size: number;
  mtimeMs: number;
  identity: Variant;
  variants: Partial<Record<Coding, Variant>>;
}

/** Distinct files remembered at most (a build has a few hundred; a rebuild while running adds more). */
const MAX_ENTRIES = 4_096;

function etagOf(size: number, mtimeMs: number, coding: string): string {
  return `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}${coding === "identity" ? "" : `-${coding}`}"`;
}

/** True when If-None-Match names `etag` (weak comparison, RFC 9110 §13.1.2). */
function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

export interface StaticAssetsOptions {
  /** The `.next/static` folder. */
  dir: string;
}

/** Handles GET/HEAD of /_next/static/** (returns true), or returns false to pass the request on. */
export function createStaticAssets(options: StaticAssetsOptions): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const root = path.resolve(options.dir);
  const cache = new Map<string, Entry>();

  const variantOf = (file: string, coding: Coding, source: fs.Stats): Variant | undefined => {
    const vfile = file + VARIANT_SUFFIX[coding];
    let st: fs.Stats;
    try {
      st = fs.statSync(vfile);
    } catch {
      return undefined;
    }
    // Older than its source: left over from an earlier build of the same name.
    if (!st.isFile() || st.size === 0 || st.mtimeMs < source.mtimeMs) return undefined;
    return { file: vfile, size: st.size, etag: etagOf(source.size, source.mtimeMs, coding) };
  };

  const entryFor = (file: string): Entry | null => {
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch {
      return null;
    }
    if (!st.isFile()) return null;
    const known = cache.get(file);
    if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) return known;
    const entry: Entry = {
      size: st.size,
      mtimeMs: st.mtimeMs,
      identity: { file, size: st.size, etag: etagOf(st.size, st.mtimeMs, "identity") },
      variants: {},
    };
    for (const c of CODINGS) {
      const v = variantOf(file, c, st);
      if (v) entry.variants[c] = v;
    }
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(file, entry);
    return entry;
  };

  return (req, res) => {
    const url = req.url ?? "";
    if (!url.startsWith(STATIC_PREFIX)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const q = url.indexOf("?");
    let rel: string;
    try {
      rel = decodeURIComponent(url.slice(STATIC_PREFIX.length, q < 0 ? undefined : q));
    } catch {
      return false; // malformed escapes: Next.js answers 400/404
    }
    if (rel === "" || rel.includes("\0")) return false;
    const file = path.resolve(root, rel);
    if (!file.startsWith(root + path.sep)) return false;
    // The variants themselves are an implementation detail, never addressed directly.
    if (file.endsWith(".br") || file.endsWith(".gz")) return false;
    const entry = entryFor(file);
    if (!entry) return false;

    const available = CODINGS.filter((c) => entry.variants[c] !== undefined);
    const coding = available.length > 0 ? chooseEncoding(req.headers["accept-encoding"], available) : "identity";
    const chosen = coding === "identity" ? entry.identity : (entry.variants[coding] as Variant);
    const headers: http.OutgoingHttpHeaders = {
      "content-type": TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
      "cache-control": "public, max-age=31536000, immutable",
      etag: chosen.etag,
      "last-modified": new Date(entry.mtimeMs).toUTCString(),
    };
    if (available.length > 0) headers.vary = "Accept-Encoding";
    if (coding !== "identity") headers["content-encoding"] = coding;
    if (notModified(req.headers["if-none-match"], chosen.etag)) {
      delete headers["content-type"];
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    headers["content-length"] = chosen.size;
    if (req.method === "HEAD") {
      res.writeHead(200, headers);
      res.end();
      return true;
    }
    const body = fs.createReadStream(chosen.file);
    body.once("open", () => {
      res.writeHead(200, headers);
      pipeline(body, res, () => undefined);
    });
    body.once("error", (err) => {
      // Gone between stat and open (a rebuild): nothing was sent yet.
      if (!res.headersSent) {
        cache.delete(file);
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
        res.end("Not found\n");
      } else res.destroy(err);
    });
    return true;
  };
}
