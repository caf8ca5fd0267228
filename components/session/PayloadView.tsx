"use client";
// Renders an opaque payload blob by content type. Markdown goes through
// Baton's own parser and renderer (lib/client/markdown.ts,
// components/session/Markdown.tsx): raw HTML stays literal text, unsafe URLs
// are dropped, links open with rel="noopener noreferrer nofollow", and images
// are never fetched (a placeholder with a link instead). JSON is
// pretty-printed and collapsible. Anything else is a download. Nothing in a
// payload can run script: there is no dangerouslySetInnerHTML anywhere on
// this path.

import clsx from "clsx";
import { useMemo, useState } from "react";
import { classifyContent, downloadName, prettyJson, sniffContent, type ClassifiedContent } from "@/lib/client/content";
import { downloadBytes } from "@/lib/client/download";
import { formatBytes } from "@/lib/client/format";
import type { PayloadBlob } from "@/lib/client/event-details";
import { Icon } from "@/components/Icon";
import { MarkdownView } from "@/components/session/Markdown";

// Other views (the handoff forms' preview) import MarkdownView from here.
export { MarkdownView };

type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

function JsonNode({ name, value, depth }: { name?: string; value: unknown; depth: number }) {
  const label = name !== undefined ? <span className="text-violet-800 dark:text-violet-300">{JSON.stringify(name)}: </span> : null;
  if (value === null || typeof value !== "object") {
    const cls =
      typeof value === "string"
        ? "text-emerald-800 dark:text-emerald-300"
        : typeof value === "number"
          ? "text-blue-800 dark:text-sky-300"
          : "text-amber-900 dark:text-amber-300";
    return (
      <div className="pl-4 break-all">
        {label}
        <span className={cls}>{JSON.stringify(value)}</span>
      </div>
    );
  }
  const entries: [string | undefined, unknown][] = Array.isArray(value)
    ? value.map((v) => [undefined, v])
    : Object.entries(value as Record<string, unknown>);
  const open = Array.isArray(value) ? "[" : "{";
  const close = Array.isArray(value) ? "]" : "}";
  if (entries.length === 0) {
    return (
      <div className="pl-4">
        {label}
        {open}
        {close}
      </div>
    );
  }
  return (
    <details open={depth < 2} className="pl-4">
      <summary className="cursor-pointer select-none">
        {label}
        {open}
        <span className="text-slate-600 dark:text-slate-400">
          {" "}
          {entries.length} {Array.isArray(value) ? "items" : "keys"}
        </span>
      </summary>
      {entries.slice(0, 500).map(([k, v], i) => (
        <JsonNode key={k ?? i} {...(k !== undefined ? { name: k } : {})} value={v} depth={depth + 1} />
      ))}
      {entries.length > 500 ? <div className="pl-4 text-slate-600 dark:text-slate-400">… {entries.length - 500} more</div> : null}
      <div>{close}</div>
    </details>
  );
}

export function JsonView({ value, label = "JSON" }: { value: unknown; label?: string }) {
  const [mode, setMode] = useState<"tree" | "text">("tree");
  const text = useMemo(() => (mode === "text" ? prettyJson(value) : ""), [mode, value]);
  return (
    <div className="rounded-md border border-slate-200 bg-slate-50 text-xs dark:border-slate-700 dark:bg-slate-900" data-content="json">
      <div className="flex items-center justify-between border-b border-slate-200 px-2 py-1 dark:border-slate-700">
        <span className="font-medium text-slate-700 dark:text-slate-300">{label}</span>
        <button
          type="button"
          className="rounded px-1.5 py-0.5 text-slate-700 hover:bg-slate-200 dark:text-slate-300 dark:hover:bg-slate-800"
          onClick={() => setMode(mode === "tree" ? "text" : "tree")}
        >
          {mode === "tree" ? "Plain text" : "Tree"}
        </button>
      </div>
      {mode === "tree" ? (
        <div className="max-h-96 overflow-auto py-1 pr-2 font-mono leading-5 [&>details]:pl-1 [&>div]:pl-1">
          <JsonNode value={value as JsonValue} depth={0} />
        </div>
      ) : (
        <pre className="max-h-96 overflow-auto p-2 font-mono leading-5 whitespace-pre-wrap">{text}</pre>
      )}
    </div>
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

function Classified({ blob, content }: { blob: PayloadBlob; content: ClassifiedContent }) {
  switch (content.kind) {
    case "markdown":
      return <MarkdownView text={content.text ?? ""} />;
    case "json":
      return <JsonView value={content.json} label={`${blob.label} · JSON`} />;
    case "text":
      return (
        <div className="space-y-1">
          <pre
            className="max-h-80 overflow-auto rounded-md border border-slate-200 bg-slate-50 p-2 font-mono text-xs whitespace-pre-wrap dark:border-slate-700 dark:bg-slate-900"
            data-content="text"
          >
            {content.text}
          </pre>
          {content.note ? <p className="text-xs text-slate-600 dark:text-slate-400">{content.note}</p> : null}
        </div>
      );
    case "binary":
      return <DownloadButton blob={blob} mediaType={content.mediaType} {...(content.note ? { note: content.note } : {})} />;
  }
}

/** A typed blob (handoff context). */
export function PayloadView({ blob, className }: { blob: PayloadBlob; className?: string }) {
  const content = useMemo(() => classifyContent(blob.contentType, blob.bytes), [blob]);
  return (
    <div className={clsx("min-w-0", className)}>
      <Classified blob={blob} content={content} />
    </div>
  );
}

/** An untyped blob (task input/output): sniffed as JSON or text, else a download. */
export function UntypedPayloadView({ blob, className }: { blob: PayloadBlob; className?: string }) {
  const content = useMemo(() => sniffContent(blob.bytes), [blob]);
  return (
    <div className={clsx("min-w-0 space-y-1", className)}>
      <p className="text-xs font-medium text-slate-700 dark:text-slate-300">{blob.label}</p>
      <Classified blob={blob} content={content} />
    </div>
  );
}
