// A payload in the server-rendered first view: the same classification and
// the same markdown, JSON-tree and text markup as the live PayloadView, minus
// what needs the browser (the JSON plain-text toggle, downloads), which the
// live view brings a moment later.

import { classifyContent, sniffContent } from "@/lib/client/content";
import type { PayloadBlob } from "@/lib/client/event-details";
import { formatBytes } from "@/lib/client/format";
import { ClassifiedPayload, JsonFrame, JsonTree, type PayloadRenderers } from "@/components/session/PayloadParts";

const FIRST_VIEW: PayloadRenderers = {
  json: (value, label) => (
    <JsonFrame label={label}>
      <JsonTree value={value} />
    </JsonFrame>
  ),
  binary: (blob, mediaType, note) => (
    <p className="text-xs text-slate-700 dark:text-slate-300" data-content="download">
      {blob.label} ({formatBytes(blob.bytes.byteLength)}, {mediaType || "unknown type"}
      {note ? ` · ${note}` : ""}): the download button comes with the live view.
    </p>
  ),
};

export function StaticPayload({ blob, typed }: { blob: PayloadBlob; typed: boolean }) {
  const content = typed ? classifyContent(blob.contentType, blob.bytes) : sniffContent(blob.bytes);
  return <ClassifiedPayload blob={blob} content={content} render={FIRST_VIEW} labelled={!typed} />;
}
