"use client";
// Raw view of one event: envelope header fields and the decoded payload as
// JSON (payloadToJson, defaults included). Computed only when opened.

import { useMemo } from "react";
import { rawEnvelopeView } from "@/lib/views/event-details";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { JsonView } from "@/features/session/PayloadView";

export function RawEnvelope({ event }: { event: SessionEvent }) {
  const raw = useMemo(() => rawEnvelopeView(event), [event]);
  return (
    <div className="space-y-2" data-testid="raw-envelope">
      <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-0.5 font-mono text-xs">
        {raw.header.map((h) => (
          <div key={h.label} className="contents">
            <dt className="text-slate-600 dark:text-slate-400">{h.label}</dt>
            <dd className="break-all text-slate-900 dark:text-slate-100">{h.value || '""'}</dd>
          </div>
        ))}
        <div className="contents">
          <dt className="text-slate-600 dark:text-slate-400">payload</dt>
          <dd className="text-slate-900 dark:text-slate-100">
            {raw.payloadBytes} bytes{raw.payloadTypeName ? ` · ${raw.payloadTypeName}` : ""}
          </dd>
        </div>
      </dl>
      {raw.payloadJson ? (
        <JsonView value={raw.payloadJson} label="Decoded payload" />
      ) : (
        <p className="text-xs text-amber-900 dark:text-amber-200">Payload not decoded: {raw.payloadError}</p>
      )}
    </div>
  );
}
