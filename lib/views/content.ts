// How to show an opaque payload blob (handoff context, task input/output):
// markdown is rendered (safely, elsewhere), JSON pretty-printed, plain text
// shown verbatim, and everything else offered as a download. Pure.

export type ContentKind = "markdown" | "json" | "text" | "binary";

/** Blobs larger than this are offered as downloads instead of rendered. */
export const MAX_RENDERED_BYTES = 512 * 1024;

/** Lower-cased media type without parameters: "Text/Markdown; charset=utf-8" → "text/markdown". */
export function mediaTypeOf(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

const MARKDOWN = new Set(["text/markdown", "text/x-markdown", "application/markdown", "text/md"]);
const JSON_TYPES = new Set(["application/json", "text/json", "application/x-ndjson", "application/ld+json"]);
/** Text types that could be active content if opened: always downloads, never rendered. */
const ACTIVE = new Set([
  "text/html",
  "application/xhtml+xml",
  "image/svg+xml",
  "text/javascript",
  "application/javascript",
  "text/xml",
  "application/xml",
]);

export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export interface ClassifiedContent {
  kind: ContentKind;
  mediaType: string;
  /** Decoded text for markdown/json/text. */
  text?: string;
  /** Parsed JSON for kind "json". */
  json?: unknown;
  /** Why a renderable type fell back to a download. */
  note?: string;
}

export function classifyContent(contentType: string, bytes: Uint8Array): ClassifiedContent {
  const mediaType = mediaTypeOf(contentType);
  if (ACTIVE.has(mediaType)) return { kind: "binary", mediaType, note: "Active content is never rendered here" };
  const renderable = MARKDOWN.has(mediaType) || JSON_TYPES.has(mediaType) || mediaType.endsWith("+json") || mediaType.startsWith("text/");
  if (!renderable) return { kind: "binary", mediaType };
  if (bytes.byteLength > MAX_RENDERED_BYTES) return { kind: "binary", mediaType, note: "Too large to show inline" };
  const text = decodeUtf8(bytes);
  if (text === undefined) return { kind: "binary", mediaType, note: "Not valid UTF-8 text" };
  if (MARKDOWN.has(mediaType)) return { kind: "markdown", mediaType, text };
  if (JSON_TYPES.has(mediaType) || mediaType.endsWith("+json")) {
    if (mediaType === "application/x-ndjson") return { kind: "text", mediaType, text };
    try {
      return { kind: "json", mediaType, text, json: JSON.parse(text) as unknown };
    } catch {
      return { kind: "text", mediaType, text, note: "Not valid JSON; shown as text" };
    }
  }
  return { kind: "text", mediaType, text };
}

/** Guess the content of an untyped blob (task input/output): JSON, text, or binary. */
export function sniffContent(bytes: Uint8Array): ClassifiedContent {
  if (bytes.byteLength === 0) return { kind: "text", mediaType: "", text: "" };
  const text = bytes.byteLength <= MAX_RENDERED_BYTES ? decodeUtf8(bytes) : undefined;
  if (text === undefined) return { kind: "binary", mediaType: "application/octet-stream" };
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return { kind: "json", mediaType: "application/json", text, json: JSON.parse(trimmed) as unknown };
    } catch {
      // fall through to text
    }
  }
  return { kind: "text", mediaType: "text/plain", text };
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  "text/markdown": "md",
  "text/plain": "txt",
  "application/json": "json",
  "text/html": "html.txt",
  "image/svg+xml": "svg.txt",
  "application/pdf": "pdf",
  "image/png": "png",
  "image/jpeg": "jpg",
  "application/zip": "zip",
  "text/csv": "csv",
};

/** A safe file name for a download: "context-12.md". */
export function downloadName(stem: string, mediaType: string): string {
  const safeStem = stem.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 80) || "payload";
  const ext = Object.prototype.hasOwnProperty.call(EXTENSIONS, mediaType) ? EXTENSIONS[mediaType] : "bin";
  return `${safeStem}.${ext}`;
}
