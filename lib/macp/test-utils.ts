// Test helpers for lib/macp tests: build SessionEvents tersely. Pure.

import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";
import type { SessionEvent } from "@/lib/macp/projections/types";

let counter = 0;

export interface EventOptions {
  sender?: string;
  ts?: number;
  sessionId?: string;
  messageId?: string;
  sequence?: number;
}

/** A SessionEvent for (mode, type) with the payload encoded via the registry. */
export function makeEvent(mode: string, messageType: string, payload: PayloadInput, opts: EventOptions = {}): SessionEvent {
  counter += 1;
  const event: SessionEvent = {
    envelope: buildEnvelope({
      mode,
      messageType,
      sessionId: opts.sessionId ?? "01JTESTSESSION000000000001",
      sender: opts.sender ?? "",
      messageId: opts.messageId ?? `msg-${counter}`,
      timestampMs: opts.ts ?? 1_700_000_000_000 + counter,
      payload,
    }),
  };
  if (opts.sequence !== undefined) event.sequence = opts.sequence;
  return event;
}
