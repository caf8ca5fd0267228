// A display model for one event row: title, actor, key fields, and the blobs
// to render (context, task input/output). It only decodes payloads and picks
// fields to show; phases and statuses come from the projections. The model is
// in model.ts, each message family's rows in core.ts, handoff.ts and task.ts,
// and the raw envelope view in raw.ts.
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { MAX_PARAGRAPH_CHARS, clipLine, clipParagraph } from "@/lib/views/clip";
import { coreDetails } from "./core";
import { handoffDetails } from "./handoff";
import { plainName, type DetailField, type EventDetails, type NameOf, type PayloadBlob, type RowContext } from "./model";
import { taskDetails } from "./task";

export { plainName, type DetailField, type EventDetails, type NameOf, type PayloadBlob } from "./model";
export { rawEnvelopeView, type RawEnvelopeView } from "./raw";

// One cache per name resolver (the live view keeps one per directory), each per envelope.
const caches = new WeakMap<NameOf, WeakMap<Envelope, EventDetails>>();

/** The row model of one event; people and agents named by `nameOf`. */
export function describeEvent(event: SessionEvent, nameOf: NameOf = plainName): EventDetails {
  let cache = caches.get(nameOf);
  if (!cache) {
    cache = new WeakMap<Envelope, EventDetails>();
    caches.set(nameOf, cache);
  }
  const hit = cache.get(event.envelope);
  if (hit) return hit;
  const d = bounded(build(event, nameOf));
  cache.set(event.envelope, d);
  return d;
}

/** Agents write these texts: each is shown up to a paragraph (lib/views/clip.ts); payload blobs are bounded by their viewers. */
function bounded(d: EventDetails): EventDetails {
  const out: EventDetails = {
    ...d,
    summary: clipParagraph(d.summary),
    fields: d.fields.map((f) => (f.value.length > MAX_PARAGRAPH_CHARS ? { ...f, value: clipParagraph(f.value) } : f)),
  };
  if (d.reason !== undefined) out.reason = clipParagraph(d.reason);
  if (d.outcome) out.outcome = { ...d.outcome, action: clipLine(d.outcome.action), reason: clipParagraph(d.outcome.reason) };
  return out;
}

function build(event: SessionEvent, nameOf: NameOf): EventDetails {
  const env = event.envelope;
  const who = (s: string): string => (s ? nameOf(s) : "the runtime");
  const actor = who(env.sender);
  const base = { actor, fields: [] as DetailField[], blobs: [] as PayloadBlob[] };
  const c: RowContext = {
    env,
    actor,
    who,
    seq: event.sequence ?? 0,
    base,
    undecodable: (title) => ({
      ...base,
      title,
      icon: "question",
      tone: "muted",
      summary: `${actor} sent ${env.messageType || "a message"} (payload could not be decoded)`,
      decodeError: "Payload could not be decoded",
    }),
  };
  return (
    coreDetails(c) ??
    handoffDetails(c) ??
    taskDetails(c) ?? {
      ...base,
      title: env.messageType || "Message",
      icon: "question",
      tone: "muted",
      summary: `${actor} sent ${env.messageType || "a message"} (not interpreted)`,
    }
  );
}
