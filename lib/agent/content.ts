// Context blobs for HandoffContext (and task input/output): content-type
// guessing from a file name, UTF-8/JSON encoding, and the 1 MiB payload limit
// the reference runtime enforces (MACP_MAX_PAYLOAD_BYTES, §2.4).

import fs from "node:fs";
import path from "node:path";
import { MacpUsageError } from "./errors";

/** Default runtime payload limit (1 MiB). */
export const MAX_PAYLOAD_BYTES = 1_048_576;

const BY_EXTENSION: Readonly<Record<string, string>> = {
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".json": "application/json",
  ".txt": "text/plain",
  ".log": "text/plain",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".csv": "text/csv",
  ".html": "text/html",
};

/** Content type for a file name: md → text/markdown, json → application/json, txt → text/plain, else octet-stream. */
export function contentTypeFor(fileName: string): string {
  const ext = path.extname(fileName).toLowerCase();
  return Object.prototype.hasOwnProperty.call(BY_EXTENSION, ext) ? (BY_EXTENSION[ext] as string) : "application/octet-stream";
}

/** Bytes for a context value: strings as UTF-8, objects as JSON, bytes unchanged. */
export function encodeContext(value: Uint8Array | string | object): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === "string") return new TextEncoder().encode(value);
  return new TextEncoder().encode(JSON.stringify(value, null, 2));
}

/** The content type implied by a context value when none is given. */
export function defaultContentType(value: Uint8Array | string | object): string {
  if (value instanceof Uint8Array) return "application/octet-stream";
  if (typeof value === "string") return "text/plain";
  return "application/json";
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1_048_576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1_048_576).toFixed(2)} MiB`;
}

/** Throw a readable error when `bytes` exceed the payload limit. */
export function checkContextSize(bytes: number, what: string, limit = MAX_PAYLOAD_BYTES): void {
  if (bytes > limit) {
    throw new MacpUsageError(
      `${what} is ${formatBytes(bytes)}, over the ${formatBytes(limit)} limit a MACP runtime accepts for one message; ` +
        "share a link to it, or split it into several contexts",
    );
  }
}

/**
 * Read a context file, guessing its content type from the extension unless
 * one is given, and refusing files over the payload limit before reading them.
 */
export function readContextFile(
  filePath: string,
  opts: { contentType?: string; limit?: number } = {},
): { contentType: string; context: Uint8Array; size: number; name: string } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(filePath);
  } catch (e) {
    throw new MacpUsageError(
      `cannot read ${filePath}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`,
    );
  }
  if (!stat.isFile()) throw new MacpUsageError(`${filePath} is not a regular file`);
  checkContextSize(stat.size, path.basename(filePath), opts.limit);
  const context = new Uint8Array(fs.readFileSync(filePath));
  checkContextSize(context.byteLength, path.basename(filePath), opts.limit);
  return { contentType: opts.contentType ?? contentTypeFor(filePath), context, size: context.byteLength, name: path.basename(filePath) };
}

/** Whether a content type is human-readable text. */
export function isTextual(contentType: string): boolean {
  const t = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return t.startsWith("text/") || t === "application/json" || t.endsWith("+json") || t === "application/yaml";
}
