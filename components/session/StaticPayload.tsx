// A payload in the server-rendered first view: the same classification and
// the same markdown, JSON-tree and text markup as the live PayloadView, minus
// what needs the browser (the JSON plain-text toggle, downloads), which the
// live view brings a moment later.

import { classifyContent, sniffContent } from "@/lib/client/content";
import type { PayloadBlob } from "@/lib/client/event-details";
import { formatBytes } from "@/lib/client/format";
import { MarkdownView } from "@/components/session/Markdown";
import { JsonFrame, JsonTree, TextBlock } from "@/components/session/PayloadParts";

export function StaticPayload({ blob, typed }: { blob: PayloadBlob; typed: boolean }) {
  const content = typed ? classifyContent(blob.contentType, blob.bytes) : sniffContent(blob.bytes);
  const body = (() => {
    switch (content.kind) {
      case "markdown":
        return <MarkdownView text={content.text ?? ""} />;
      case "json":
        return (
          <JsonFrame label={`${blob.label} · JSON`}>
            <JsonTree value={content.json} />
          </JsonFrame>
        );
      case "text":
        return <TextBlock text={content.text ?? ""} {...(content.note ? { note: content.note } : {})} />;
      case "binary":
        return (
          <p className="text-xs text-slate-700 dark:text-slate-300" data-content="download">
            {blob.label} ({formatBytes(blob.bytes.byteLength)}, {content.mediaType || "unknown type"}
            {content.note ? ` · ${content.note}` : ""}): the download button comes with the live view.
          </p>
        );
    }
  })();
  if (typed) return <div className="min-w-0">{body}</div>;
  return (
    <div className="min-w-0 space-y-1">
      <p className="text-xs font-medium text-slate-700 dark:text-slate-300">{blob.label}</p>
      {body}
    </div>
  );
}
