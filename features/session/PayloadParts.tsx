// Payload pieces without state, shared by the server-rendered first view
// (StaticPayload) and the live viewers (PayloadView): the choice of view by
// content kind, the JSON tree (native <details>, so it folds without
// JavaScript), its frame, and plain text. What differs between the two
// (JSON's plain-text toggle, the download button, how much is shown) comes
// in as renderers. Agents choose these payloads, so every view is bounded
// in depth and size (PayloadLimits): a JSON document is drawn from a bounded
// outline, never walked recursively, and long text shows its start with a
// note and, in the live view, a download of the whole payload.

import clsx from "clsx";
import type { ReactNode } from "react";
import type { ClassifiedContent } from "@/lib/views/content";
import {
  FIRST_VIEW_JSON_LIMITS,
  LIVE_JSON_LIMITS,
  outlineJson,
  type JsonLeaf,
  type JsonLimits,
  type JsonOutline,
  type JsonOutlineNode,
} from "@/lib/views/json-outline";
import type { PayloadBlob } from "@/lib/views/event-details";
import { MarkdownView } from "@/features/session/Markdown";
import { formatCount } from "@/lib/views/format";

/** How much of a payload a view shows (agents choose the payloads: everything is bounded). */
export interface PayloadLimits {
  json: JsonLimits;
  /** Characters of text or markdown shown; the rest is offered as a download. */
  maxTextChars: number;
}

export const LIVE_PAYLOAD_LIMITS: Readonly<PayloadLimits> = Object.freeze({ json: LIVE_JSON_LIMITS, maxTextChars: 200_000 });
export const FIRST_VIEW_PAYLOAD_LIMITS: Readonly<PayloadLimits> = Object.freeze({ json: FIRST_VIEW_JSON_LIMITS, maxTextChars: 16_000 });

const KEY_CLASS = "text-violet-800 dark:text-violet-300";
const LEAF_CLASS: Record<JsonLeaf["type"], string> = {
  string: "text-emerald-800 dark:text-emerald-300",
  number: "text-blue-800 dark:text-sky-300",
  boolean: "text-amber-900 dark:text-amber-300",
  null: "text-amber-900 dark:text-amber-300",
  other: "text-slate-700 dark:text-slate-300",
};
const MUTED = "text-slate-600 dark:text-slate-400";

const count = (n: number, one: string, many: string) => `${formatCount(n)} ${n === 1 ? one : many}`;

/**
 * One node of a bounded JSON outline (lib/views/json-outline.ts). It
 * recurses only as deep as the outline goes (its maxDepth), never as deep as
 * the payload does.
 */
export function JsonNode({ node, depth }: { node: JsonOutlineNode; depth: number }) {
  const label = node.name !== undefined ? <span className={KEY_CLASS}>{JSON.stringify(node.name)}: </span> : null;
  if (node.kind === "leaf") {
    return (
      <div className="pl-4 break-all">
        {label}
        <span className={LEAF_CLASS[node.type]}>{node.text}</span>
        {node.clipped > 0 ? <span className={MUTED}> … {count(node.clipped, "more character", "more characters")}</span> : null}
      </div>
    );
  }
  const open = node.array ? "[" : "{";
  const close = node.array ? "]" : "}";
  if (node.size === 0) {
    return (
      <div className="pl-4">
        {label}
        {open}
        {close}
      </div>
    );
  }
  const what = node.array ? count(node.size, "item", "items") : count(node.size, "key", "keys");
  if (node.tooDeep) {
    return (
      <div className="pl-4" data-json="too-deep">
        {label}
        {open}
        <span className={MUTED}> {what} nested too deep to show </span>
        {close}
      </div>
    );
  }
  return (
    <details open={depth < 2} className="pl-4">
      <summary className="cursor-pointer select-none">
        {label}
        {open}
        <span className={MUTED}> {what}</span>
      </summary>
      {node.children.map((child, i) => (
        <JsonNode key={i} node={child} depth={depth + 1} />
      ))}
      {node.omitted > 0 ? <div className={clsx("pl-4", MUTED)}>… {count(node.omitted, "more", "more")} not shown</div> : null}
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

/** A bounded outline as a tree of native <details> (folds without JavaScript). */
export function JsonOutlineTree({ outline }: { outline: JsonOutline }) {
  return (
    <div className="max-h-96 overflow-auto py-1 pr-2 font-mono leading-5 [&>details]:pl-1 [&>div]:pl-1">
      <JsonNode node={outline.root} depth={0} />
    </div>
  );
}

/** Under a JSON view that shows only part of its payload: why, and what to do about it. */
export function JsonShortfall({ outline, rest }: { outline: JsonOutline; rest?: ReactNode }) {
  if (!outline.truncated) return null;
  return (
    <div
      className="flex flex-wrap items-center gap-2 border-t border-slate-200 px-2 py-1 text-slate-700 dark:border-slate-700 dark:text-slate-300"
      data-json="shortfall"
      role="note"
    >
      <span>
        {outline.tooDeep ? "Nested too deep to show in full." : "Too large to show in full."} Shown:{" "}
        {count(outline.shown, "value", "values")}.
      </span>
      {rest}
    </div>
  );
}

/** A JSON value with its shortfall note (the first view; the live JsonView adds a plain-text mode). */
export function JsonTree({ value, limits, rest }: { value: unknown; limits: JsonLimits; rest?: ReactNode }) {
  const outline = outlineJson(value, limits);
  return (
    <>
      <JsonOutlineTree outline={outline} />
      <JsonShortfall outline={outline} {...(rest !== undefined ? { rest } : {})} />
    </>
  );
}

/** The first `max` characters of `text` (never splitting a surrogate pair) and how many were left out. */
export function clipText(text: string, max: number): { shown: string; omitted: number } {
  if (text.length <= max) return { shown: text, omitted: 0 };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { shown: text.slice(0, end), omitted: text.length - end };
}

/** Under a text or markdown view that shows only the start of its payload. */
export function TextShortfall({ omitted, rest }: { omitted: number; rest?: ReactNode }) {
  if (omitted <= 0) return null;
  return (
    <div className="flex flex-wrap items-center gap-2 text-xs text-slate-700 dark:text-slate-300" data-content="shortfall" role="note">
      <span>Shortened: {count(omitted, "more character", "more characters")} not shown.</span>
      {rest}
    </div>
  );
}

export function TextBlock({ text, note, maxChars, rest }: { text: string; note?: string; maxChars: number; rest?: ReactNode }) {
  const { shown, omitted } = clipText(text, maxChars);
  return (
    <div className="space-y-1">
      <pre
        className="max-h-80 overflow-auto rounded-md border border-slate-200 bg-slate-50 p-2 font-mono text-xs whitespace-pre-wrap dark:border-slate-700 dark:bg-slate-900"
        data-content="text"
      >
        {shown}
      </pre>
      <TextShortfall omitted={omitted} {...(rest !== undefined ? { rest } : {})} />
      {note ? <p className="text-xs text-slate-600 dark:text-slate-400">{note}</p> : null}
    </div>
  );
}

/** The parts of a payload view that the live view and the first view draw differently. */
export interface PayloadRenderers {
  limits: PayloadLimits;
  json(value: unknown, label: string, blob: PayloadBlob): ReactNode;
  binary(blob: PayloadBlob, mediaType: string, note: string | undefined): ReactNode;
  /** Offered when only part of a payload is shown (the live view: download it whole). */
  rest(blob: PayloadBlob, mediaType: string): ReactNode;
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
      case "markdown": {
        const { shown, omitted } = clipText(content.text ?? "", render.limits.maxTextChars);
        return (
          <div className="space-y-1">
            <MarkdownView text={shown} />
            <TextShortfall omitted={omitted} rest={omitted > 0 ? render.rest(blob, content.mediaType) : undefined} />
          </div>
        );
      }
      case "json":
        return render.json(content.json, `${blob.label} · JSON`, blob);
      case "text":
        return (
          <TextBlock
            text={content.text ?? ""}
            maxChars={render.limits.maxTextChars}
            rest={render.rest(blob, content.mediaType)}
            {...(content.note ? { note: content.note } : {})}
          />
        );
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
