// A payload in the server-rendered first view: the same classification and
// the same markdown, JSON-tree and text markup as the live PayloadView, minus
// what needs the browser (the JSON plain-text toggle, downloads), which the
// live view brings a moment later. It shows less of a large payload than the
// live view (FIRST_VIEW_PAYLOAD_LIMITS), so the page's HTML stays small.

import { classifyContent, sniffContent } from "@/lib/views/content";
import type { PayloadBlob } from "@/lib/views/event-details";
import { formatBytes } from "@/lib/views/format";
import { ClassifiedPayload, FIRST_VIEW_PAYLOAD_LIMITS, JsonFrame, JsonTree, type PayloadRenderers } from "@/features/session/PayloadParts";

const LATER = <span>The whole payload can be downloaded once the live view has loaded.</span>;

const FIRST_VIEW: PayloadRenderers = {
  limits: FIRST_VIEW_PAYLOAD_LIMITS,
  json: (value, label) => (
    <JsonFrame label={label}>
      <JsonTree value={value} limits={FIRST_VIEW_PAYLOAD_LIMITS.json} rest={LATER} />
    </JsonFrame>
  ),
  rest: () => LATER,
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
