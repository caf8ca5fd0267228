// The handoff family's in-session actions (offer, context, accept/decline,
// commit) as specs for ActionCore.inSession: what decide() is asked and how
// the payload is built from the session's state.
import { CORE_TYPES, HANDOFF_TYPES, SCOPE_EXTENSION } from "@/lib/macp/constants";
import type { CommitInput, ContextInput, OfferInput, RespondInput } from "../action-input";
import { invalidField } from "../action-input";
import type { SessionActionSpec } from "./core";
import { denied, pendingOffer } from "./results";

export function offerSpec(input: OfferInput): SessionActionSpec {
  return {
    action: "offer",
    messageType: HANDOFF_TYPES.Offer,
    sizeField: "reason",
    decideExtra: () => ({ offer: { target: input.target } }),
    build: ({ loaded }) => {
      const fallback = loaded.start?.extensions[SCOPE_EXTENSION];
      const scope = input.scope !== "" ? input.scope : fallback ? new TextDecoder().decode(fallback) : "";
      if (scope === "") throw invalidField("scope", "is required: say what is handed over (the session has no default scope)");
      return {
        payload: { handoffId: input.messageId, targetParticipant: input.target, scope, reason: input.reason },
        extras: { handoffId: input.messageId },
      };
    },
  };
}

export function attachContextSpec(input: ContextInput): SessionActionSpec {
  return {
    action: "attachContext",
    messageType: HANDOFF_TYPES.Context,
    sizeField: input.field,
    build: ({ view, me }) => {
      const offers = view.handoff?.offers ?? [];
      const offer = input.handoffId === "" ? offers[offers.length - 1] : offers.find((o) => o.handoffId === input.handoffId);
      if (!offer) throw invalidField("handoff_id", `there is no offer ${input.handoffId} in this session`);
      if (offer.offeredBy !== me) throw invalidField("handoff_id", "context can only be attached to your own offers");
      return {
        payload: { handoffId: offer.handoffId, contentType: input.contentType, context: input.data },
        extras: { handoffId: offer.handoffId },
      };
    },
  };
}

export function respondSpec(kind: "accept" | "decline", input: RespondInput): SessionActionSpec {
  return {
    action: kind,
    messageType: kind === "accept" ? HANDOFF_TYPES.Accept : HANDOFF_TYPES.Decline,
    sizeField: "reason",
    build: ({ view, me }) => {
      const pending = pendingOffer(view);
      if (!pending) throw denied("There is no offer waiting for an answer.", "state");
      if (input.handoffId !== "" && input.handoffId !== pending.handoffId) {
        throw invalidField("handoff_id", `is not the offer waiting for your answer (that is ${pending.handoffId}); reload the session`);
      }
      const payload =
        kind === "accept"
          ? { handoffId: pending.handoffId, acceptedBy: me, reason: input.reason }
          : { handoffId: pending.handoffId, declinedBy: me, reason: input.reason };
      return { payload, extras: { handoffId: pending.handoffId } };
    },
  };
}

export function commitSpec(input: CommitInput): SessionActionSpec {
  return {
    action: "commit",
    messageType: CORE_TYPES.Commitment,
    sizeField: "reason",
    build: ({ loaded, view, nameOf }) => {
      if (!view.handoff) throw denied("This isn't a handoff session; use TaskCommit for tasks.", "wrong_mode");
      const offers = view.handoff.offers;
      const accepted = offers.find((o) => o.status === "accepted");
      // decide() allowed a commit with only a pending offer: its implicit-accept time has passed.
      const implicit = accepted ? undefined : pendingOffer(view);
      const decided = accepted ?? implicit ?? offers[offers.length - 1];
      const scope = decided?.scope || view.intent;
      let reason = input.reason;
      if (input.positive) {
        const newOwner = (accepted ?? implicit)?.target;
        if (newOwner === undefined) {
          throw invalidField("outcome", "no offer was accepted, so the handoff can only be committed as declined");
        }
        const named = `${nameOf(newOwner)} (${newOwner})`;
        if (reason === "") reason = `${named} takes over ${scope}.`;
        else if (!reason.includes(newOwner)) reason = `${reason} (new owner: ${newOwner})`;
      } else if (reason === "") {
        reason = `The handoff was declined; ${nameOf(view.initiator)} (${view.initiator}) keeps ${scope}.`;
      }
      return {
        payload: {
          commitmentId: input.messageId,
          action: input.positive ? "handoff.accepted" : "handoff.declined",
          authorityScope: input.authorityScope || scope || "handoff",
          reason,
          modeVersion: loaded.meta.modeVersion,
          policyVersion: loaded.meta.policyVersion,
          configurationVersion: loaded.meta.configurationVersion,
          outcomePositive: input.positive,
        },
        ...(decided ? { extras: { handoffId: decided.handoffId } } : {}),
      };
    },
  };
}
