// Handoff mode (PROTOCOL.md §4): the initiator offers a scoped responsibility
// to one declared participant at a time; the target accepts or declines; a
// Commitment binds the outcome once some offer has been answered.
import { create } from "@bufbuild/protobuf";
import { HANDOFF_MODE, HANDOFF_TYPES, MODE_VERSION } from "@/lib/macp/constants";
import { ModeDescriptorSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  HandoffAcceptPayloadSchema,
  HandoffContextPayloadSchema,
  HandoffDeclinePayloadSchema,
  HandoffOfferPayloadSchema,
} from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { MacpRejection, policyDenied, reject } from "../errors";
import { checkSchemaVersion, decodeOrReject, type ModeHandler, type SessionContext } from "./types";

export type Disposition = "Offered" | "Accepted" | "Declined";

export interface OfferRecord {
  readonly handoffId: string;
  readonly targetParticipant: string;
  readonly scope: string;
  readonly reason: string;
  readonly offeredBy: string;
  readonly offeredAtMs: number;
  readonly disposition: Disposition;
  readonly acceptedBy: string;
  readonly declinedBy: string;
  readonly outcomeReason: string;
  readonly contextCount: number;
}

export interface HandoffState {
  /** Offers by handoff_id, in offer order (Map keeps insertion order). */
  readonly offers: ReadonlyMap<string, OfferRecord>;
}

const TYPES = new Set<string>(Object.values(HANDOFF_TYPES));

function withOffer(state: HandoffState, rec: OfferRecord): HandoffState {
  const offers = new Map(state.offers);
  offers.set(rec.handoffId, rec);
  return { offers };
}

function existingOffer(state: HandoffState, handoffId: string): OfferRecord {
  const rec = handoffId === "" ? undefined : state.offers.get(handoffId);
  if (!rec) return reject("INVALID_ENVELOPE", `unknown handoff_id "${handoffId}"`);
  return rec;
}

export const handoffMode: ModeHandler<HandoffState> = {
  descriptor: create(ModeDescriptorSchema, {
    mode: HANDOFF_MODE,
    modeVersion: MODE_VERSION,
    title: "Handoff Mode",
    description: "Transfer of a scoped responsibility from its current owner to a named target.",
    determinismClass: "context-frozen",
    participantModel: "delegated",
    messageTypes: ["SessionStart", "HandoffOffer", "HandoffContext", "HandoffAccept", "HandoffDecline", "Commitment"],
    terminalMessageTypes: ["Commitment"],
    schemaUris: { protobuf: "buf.build/multiagentcoordinationprotocol/macp" },
  }),

  initialState: () => ({ offers: new Map() }),

  validateStart(initiator, participants) {
    if (participants.size < 2) return "handoff sessions need at least 2 participants";
    if (!participants.has(initiator)) return "the initiator must be one of the participants";
    return null;
  },

  knowsType: (t) => TYPES.has(t),

  senderAllowed(type, sender, ctx: SessionContext) {
    if (type === HANDOFF_TYPES.Offer) return sender === ctx.initiator;
    return ctx.participants.has(sender);
  },

  apply(state, env: Envelope, ctx) {
    const sender = env.sender;
    switch (env.messageType) {
      case HANDOFF_TYPES.Offer: {
        const p = decodeOrReject(HandoffOfferPayloadSchema, env.payload, "HandoffOfferPayload");
        if (p.handoffId.trim() === "") reject("INVALID_ENVELOPE", "handoff_id must not be empty");
        if (state.offers.has(p.handoffId)) reject("INVALID_ENVELOPE", `handoff_id "${p.handoffId}" was already used in this session`);
        if (p.targetParticipant === "") reject("INVALID_ENVELOPE", "target_participant must not be empty");
        if (!ctx.participants.has(p.targetParticipant)) {
          reject("INVALID_ENVELOPE", `target_participant "${p.targetParticipant}" is not a declared participant`);
        }
        if (p.targetParticipant === sender) reject("INVALID_ENVELOPE", "an owner cannot offer a handoff to itself");
        for (const o of state.offers.values()) {
          if (o.disposition === "Offered")
            reject("INVALID_ENVELOPE", `offer "${o.handoffId}" is still pending; only one offer may be outstanding`);
          if (o.disposition === "Accepted")
            reject("INVALID_ENVELOPE", `offer "${o.handoffId}" was already accepted; the session takes no further offers`);
        }
        return withOffer(state, {
          handoffId: p.handoffId,
          targetParticipant: p.targetParticipant,
          scope: p.scope,
          reason: p.reason,
          offeredBy: sender,
          offeredAtMs: Number(env.timestampUnixMs),
          disposition: "Offered",
          acceptedBy: "",
          declinedBy: "",
          outcomeReason: "",
          contextCount: 0,
        });
      }
      case HANDOFF_TYPES.Context: {
        const p = decodeOrReject(HandoffContextPayloadSchema, env.payload, "HandoffContextPayload");
        const rec = existingOffer(state, p.handoffId);
        if (rec.offeredBy !== sender) throw new MacpRejection("FORBIDDEN", "only the author of the offer may attach context to it");
        return withOffer(state, { ...rec, contextCount: rec.contextCount + 1 });
      }
      case HANDOFF_TYPES.Accept:
      case HANDOFF_TYPES.Decline: {
        const accept = env.messageType === HANDOFF_TYPES.Accept;
        const p = accept
          ? decodeOrReject(HandoffAcceptPayloadSchema, env.payload, "HandoffAcceptPayload")
          : decodeOrReject(HandoffDeclinePayloadSchema, env.payload, "HandoffDeclinePayload");
        const rec = existingOffer(state, p.handoffId);
        if (rec.targetParticipant !== sender) {
          throw new MacpRejection(
            "FORBIDDEN",
            `only the offer's target (${rec.targetParticipant}) may ${accept ? "accept" : "decline"} it`,
          );
        }
        const by = "acceptedBy" in p ? p.acceptedBy : p.declinedBy;
        if (by !== "" && by !== sender) reject("INVALID_ENVELOPE", `${accept ? "accepted_by" : "declined_by"} must equal the sender`);
        if (rec.disposition !== "Offered")
          reject("INVALID_ENVELOPE", `offer "${rec.handoffId}" was already ${rec.disposition.toLowerCase()}`);
        return withOffer(state, {
          ...rec,
          disposition: accept ? "Accepted" : "Declined",
          acceptedBy: accept ? sender : "",
          declinedBy: accept ? "" : sender,
          outcomeReason: p.reason,
        });
      }
      default:
        return reject("INVALID_ENVELOPE", `unknown handoff message type ${env.messageType}`);
    }
  },

  commit(state, env, _commitment, ctx) {
    // Implicit accept (§4.6): evaluated lazily at commitment time from envelope timestamps.
    let next = state;
    const timeout = ctx.policy.rules.acceptance.implicitAcceptTimeoutMs;
    if (timeout > 0) {
      const at = Number(env.timestampUnixMs);
      for (const o of state.offers.values()) {
        if (o.disposition === "Offered" && o.offeredAtMs > 0 && at - o.offeredAtMs >= timeout) {
          next = withOffer(next, {
            ...o,
            disposition: "Accepted",
            acceptedBy: o.targetParticipant,
            outcomeReason: "implicit accept (policy timeout)",
          });
        }
      }
    }
    const answered = [...next.offers.values()].some((o) => o.disposition !== "Offered");
    if (!answered) reject("INVALID_ENVELOPE", "a handoff can only be committed once an offer has been accepted or declined");
    const denied = checkSchemaVersion(ctx.policy);
    if (denied) policyDenied(denied);
    return next;
  },
};
