// Payload pieces without state, shared by the server-rendered first view
// (StaticPayload) and the live viewers (PayloadView): the choice of view by
// content kind, the JSON tree (native <details>, so it folds without
// JavaScript), its frame, and plain text. What differs between the two
// (JSON's plain-text toggle, the download button) comes in as renderers.

import clsx from "clsx";
import type { ReactNode } from "react";
import type { ClassifiedContent } from "@/lib/client/content";
import type { PayloadBlob } from "@/lib/client/event-details";
import { MarkdownView } from "@/components/session/Markdown";

type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export function JsonNode({ name, value, depth }: { name?: string; value: unknown; depth: number }) {
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

/** The box around a JSON payload: a label, an optional control, the body. */
export function JsonFrame({ label, control, children }: { label: string; control?: ReactNode; children: ReactNode }) {
  return (
    <div className="rounded-md border border-slate-200 bg-slate-50 text-xs dark:border-slate-700 dark:bg-slate-900" data-content="json">
      <div className="flex items-center justify-between border-b border-slate-200 px-2 py-1 dark:border-slate-700">
        <span className="font-medium text-slate-700 dark:text-slate-300">{label}</span>
        {control}
      </div>
      {children}
    </div>
  );
}

export function JsonTree({ value }: { value: unknown }) {
  return (
    <div className="max-h-96 overflow-auto py-1 pr-2 font-mono leading-5 [&>details]:pl-1 [&>div]:pl-1">
      <JsonNode value={value as JsonValue} depth={0} />
    </div>
  );
}

export function TextBlock({ text, note }: { text: string; note?: string }) {
  return (
    <div className="space-y-1">
      <pre
        className="max-h-80 overflow-auto rounded-md border border-slate-200 bg-slate-50 p-2 font-mono text-xs whitespace-pre-wrap dark:border-slate-700 dark:bg-slate-900"
        data-content="text"
      >
        {text}
      </pre>
      {note ? <p className="text-xs text-slate-600 dark:text-slate-400">{note}</p> : null}
    </div>
  );
}

/** The parts of a payload view that the live view and the first view draw differently. */
export interface PayloadRenderers {
  json(value: unknown, label: string): ReactNode;
  binary(blob: PayloadBlob, mediaType: string, note: string | undefined): ReactNode;
}

/**
 * A classified blob: markdown, JSON, text or binary. An untyped blob (task
 * input/output, `labelled`) shows its label above the content.
 */
export function ClassifiedPayload({
  blob,
  content,
  render,
  labelled = false,
  className,
}: {
  blob: PayloadBlob;
  content: ClassifiedContent;
  render: PayloadRenderers;
  labelled?: boolean;
  className?: string;
}) {
  const body = (() => {
    switch (content.kind) {
      case "markdown":
        return <MarkdownView text={content.text ?? ""} />;
      case "json":
        return render.json(content.json, `${blob.label} · JSON`);
      case "text":
        return <TextBlock text={content.text ?? ""} {...(content.note ? { note: content.note } : {})} />;
      case "binary":
        return render.binary(blob, content.mediaType, content.note);
    }
  })();
  if (!labelled) return <div className={clsx("min-w-0", className)}>{body}</div>;
  return (
    <div className={clsx("min-w-0 space-y-1", className)}>
      <p className="text-xs font-medium text-slate-700 dark:text-slate-300">{blob.label}</p>
      {body}
    </div>
  );
}
