// The display model of one event row (what describeEvent returns) and what
// each message family's builder (core.ts, handoff.ts, task.ts) is given.
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { shortParticipantName } from "@/lib/authz/decide";
import type { IconName, Tone } from "@/lib/views/labels";

export interface DetailField {
  label: string;
  value: string;
  mono?: boolean;
}

export interface PayloadBlob {
  label: string;
  contentType: string;
  bytes: Uint8Array;
  /** File-name stem for downloads. */
  stem: string;
}

export interface EventDetails {
  title: string;
  icon: IconName;
  tone: Tone;
  actor: string;
  /** One line: "alice offered the handoff to bob". */
  summary: string;
  fields: DetailField[];
  reason?: string;
  context?: PayloadBlob;
  blobs: PayloadBlob[];
  /** 0..1 for task updates. */
  progress?: number;
  outcome?: { positive: boolean; action: string; reason: string; authorityScope: string; commitmentId: string };
  decodeError?: string;
}

/** Display name for a participant id (lib/views/directory.ts nameIn); without a directory, the id without its prefix. */
export type NameOf = (participantId: string) => string;

/** The default name: the id without a conventional prefix ("agent://oncall/alice" → "oncall/alice"). */
export const plainName: NameOf = (id) => shortParticipantName(id);

/** One event as a family's builder sees it. */
export interface RowContext {
  env: Envelope;
  /** Who sent it, named. */
  actor: string;
  /** A participant named (the runtime when empty). */
  who: (participantId: string) => string;
  /** The event's sequence number (0 when unknown), for download names. */
  seq: number;
  /** The fields every row starts from. */
  base: { actor: string; fields: DetailField[]; blobs: PayloadBlob[] };
  /** The row of a message whose payload does not decode. */
  undecodable: (title: string) => EventDetails;
}

export const nonEmpty = (fields: (DetailField | false)[]): DetailField[] =>
  fields.filter((f): f is DetailField => f !== false && f.value !== "");
