"use client";
// Renders an opaque payload blob by content type. Markdown goes through
// Baton's own parser and renderer (lib/views/markdown.ts,
// features/session/Markdown.tsx): raw HTML stays literal text, unsafe URLs
// are dropped, links open with rel="noopener noreferrer nofollow", and images
// are never fetched (a placeholder with a link instead). JSON is
// pretty-printed and collapsible. Anything else is a download. Nothing in a
// payload can run script: there is no dangerouslySetInnerHTML anywhere on
// this path. Nothing in a payload can exhaust the page either: every view is
// bounded (PayloadParts.tsx), with a download of the whole payload.

import { useMemo, useState, type ReactNode } from "react";
import { classifyContent, downloadName, sniffContent } from "@/lib/views/content";
import { boundedPrettyJson, LIVE_JSON_LIMITS, outlineJson } from "@/lib/views/json-outline";
import { downloadBytes } from "@/features/session/download";
import { formatBytes } from "@/lib/views/format";
import type { PayloadBlob } from "@/lib/views/event-details";
import { Icon } from "@/components/ui/Icon";
import { MarkdownView } from "@/features/session/Markdown";
import {
  ClassifiedPayload,
  JsonFrame,
  JsonOutlineTree,
  JsonShortfall,
  LIVE_PAYLOAD_LIMITS,
  type PayloadRenderers,
} from "@/features/session/PayloadParts";

// Other views (the handoff forms' preview) import MarkdownView from here.
export { MarkdownView };

/** Characters of the plain-text mode (it is built without recursion and bounded). */
const PLAIN_TEXT_LIMITS = { maxChars: 200_000, maxDepth: LIVE_JSON_LIMITS.maxDepth };

export function JsonView({ value, label = "JSON", rest }: { value: unknown; label?: string; rest?: ReactNode }) {
  const [mode, setMode] = useState<"tree" | "text">("tree");
  const outline = useMemo(() => outlineJson(value, LIVE_JSON_LIMITS), [value]);
  const text = useMemo(() => (mode === "text" ? boundedPrettyJson(value, PLAIN_TEXT_LIMITS).text : ""), [mode, value]);
  return (
    <JsonFrame
      label={label}
      control={
        <button
          type="button"
          className="rounded px-1.5 py-0.5 text-slate-700 hover:bg-slate-200 dark:text-slate-300 dark:hover:bg-slate-800"
          onClick={() => setMode(mode === "tree" ? "text" : "tree")}
        >
          {mode === "tree" ? "Plain text" : "Tree"}
        </button>
      }
    >
      {mode === "tree" ? (
        <JsonOutlineTree outline={outline} />
      ) : (
        <pre className="max-h-96 overflow-auto p-2 font-mono leading-5 whitespace-pre-wrap">{text}</pre>
      )}
      <JsonShortfall outline={outline} {...(rest !== undefined ? { rest } : {})} />
    </JsonFrame>
  );
}

export function DownloadButton({ blob, note, mediaType }: { blob: PayloadBlob; note?: string; mediaType: string }) {
  return (
    <div className="flex flex-wrap items-center gap-2 text-xs text-slate-700 dark:text-slate-300" data-content="download">
      <button
        type="button"
        onClick={() => downloadBytes(blob.bytes, downloadName(blob.stem, mediaType))}
        className="inline-flex items-center gap-1.5 rounded-md px-2 py-1 font-medium text-blue-800 ring-1 ring-blue-300 ring-inset hover:bg-blue-50 dark:text-sky-300 dark:ring-sky-800 dark:hover:bg-slate-800"
      >
        <Icon name="download" />
        Download {blob.label.toLowerCase()} ({formatBytes(blob.bytes.byteLength)})
      </button>
      <span>
        {mediaType || "unknown type"}
        {note ? ` · ${note}` : ""}
      </span>
    </div>
  );
}

const LIVE: PayloadRenderers = {
  limits: LIVE_PAYLOAD_LIMITS,
  json: (value, label, blob) => <JsonView value={value} label={label} rest={<DownloadButton blob={blob} mediaType="application/json" />} />,
  binary: (blob, mediaType, note) => <DownloadButton blob={blob} mediaType={mediaType} {...(note ? { note } : {})} />,
  rest: (blob, mediaType) => <DownloadButton blob={blob} mediaType={mediaType} />,
};

/** A typed blob (handoff context). */
export function PayloadView({ blob, className }: { blob: PayloadBlob; className?: string }) {
  const content = useMemo(() => classifyContent(blob.contentType, blob.bytes), [blob]);
  return <ClassifiedPayload blob={blob} content={content} render={LIVE} {...(className ? { className } : {})} />;
}

/** An untyped blob (task input/output): sniffed as JSON or text, else a download. */
export function UntypedPayloadView({ blob, className }: { blob: PayloadBlob; className?: string }) {
  const content = useMemo(() => sniffContent(blob.bytes), [blob]);
  return <ClassifiedPayload blob={blob} content={content} render={LIVE} labelled {...(className ? { className } : {})} />;
}
