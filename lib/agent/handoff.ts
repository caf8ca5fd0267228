// HandoffSession (PROTOCOL.md §4): one agent's handle on a Handoff-mode
// session. The initiator (current owner) starts, offers, shares context and
// commits; the target accepts or declines. Every call builds one envelope,
// sends it and resolves with the Ack (a rejection throws MacpAckError).

import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, HANDOFF_TYPES } from "@/lib/macp/constants";
import type { MacpClient } from "./client";
import { defaultContentType, encodeContext } from "./content";
import { MacpUsageError } from "./errors";
import { HandoffProjection } from "./projections";
import { ModeSession, type MessageOptions, type ModeSessionOptions } from "./session";

export interface OfferInput extends MessageOptions {
  /** Default: the next free `h<n>` in this session. */
  handoffId?: string;
  targetParticipant: string;
  scope?: string;
  reason?: string;
}

export interface ContextInput extends MessageOptions {
  /** Default: the active offer. */
  handoffId?: string;
  /** Default: text/plain for strings, application/json for objects, octet-stream for bytes. */
  contentType?: string;
  context: Uint8Array | string | object;
}

export interface RespondInput extends MessageOptions {
  /** Default: the active offer. */
  handoffId?: string;
  reason?: string;
}

export class HandoffSession extends ModeSession<HandoffProjection> {
  readonly mode = HANDOFF_MODE;
  protected readonly scopeName = "handoff";

  constructor(client: MacpClient, options: ModeSessionOptions<HandoffProjection> = {}) {
    super(client, options.projection ?? new HandoffProjection(), options);
  }

  /**
   * Handle on an existing session: adopts its bound versions and reads its
   * history into the projection, so defaults (active offer…) work.
   */
  static async attach(client: MacpClient, sessionId: string, opts: { signal?: AbortSignal } = {}): Promise<HandoffSession> {
    const s = new HandoffSession(client, { sessionId });
    await s.syncVersions(opts);
    await s.refresh(opts);
    return s;
  }

  /** The id the next offer gets by default: h1, h2, … */
  nextHandoffId(): string {
    for (let n = this.projection.offers.length + 1; ; n++) {
      const id = `h${n}`;
      if (!this.projection.getHandoff(id)) return id;
    }
  }

  private activeHandoffId(given: string | undefined, what: string): string {
    if (given !== undefined && given !== "") return given;
    const active = this.projection.activeOffer() ?? this.projection.lastOffer();
    if (!active) throw new MacpUsageError(`no offer is known in session ${this.sessionId}; pass handoffId to ${what}`);
    return active.handoffId;
  }

  /** HandoffOffer to a declared participant (initiator only). */
  async offer(input: OfferInput): Promise<Ack> {
    if (input.targetParticipant.trim() === "") throw new MacpUsageError("offer needs a targetParticipant");
    return this.post(
      HANDOFF_TYPES.Offer,
      {
        handoffId: input.handoffId || this.nextHandoffId(),
        targetParticipant: input.targetParticipant,
        scope: input.scope ?? "",
        reason: input.reason ?? "",
      },
      input,
    );
  }

  /** HandoffContext: a blob (runbook, notes, JSON state) attached to an offer by its author. */
  async sendContext(input: ContextInput): Promise<Ack> {
    return this.post(
      HANDOFF_TYPES.Context,
      {
        handoffId: this.activeHandoffId(input.handoffId, "sendContext"),
        contentType: input.contentType ?? defaultContentType(input.context),
        context: encodeContext(input.context),
      },
      input,
    );
  }

  /** Alias of `sendContext`. */
  async addContext(input: ContextInput): Promise<Ack> {
    return this.sendContext(input);
  }

  /** HandoffAccept by the offer's target. */
  async acceptHandoff(input: RespondInput & { acceptedBy?: string } = {}): Promise<Ack> {
    return this.post(
      HANDOFF_TYPES.Accept,
      {
        handoffId: this.activeHandoffId(input.handoffId, "acceptHandoff"),
        acceptedBy: input.acceptedBy ?? this.client.sender ?? "",
        reason: input.reason ?? "",
      },
      input,
    );
  }

  /** HandoffDecline by the offer's target. */
  async decline(input: RespondInput & { declinedBy?: string } = {}): Promise<Ack> {
    return this.post(
      HANDOFF_TYPES.Decline,
      {
        handoffId: this.activeHandoffId(input.handoffId, "decline"),
        declinedBy: input.declinedBy ?? this.client.sender ?? "",
        reason: input.reason ?? "",
      },
      input,
    );
  }

  /**
   * The commitment action the current projection suggests: `handoff.accepted`
   * once an offer was accepted, `handoff.declined` when the last offer was
   * declined, undefined while an offer is still open.
   */
  suggestedAction(): "handoff.accepted" | "handoff.declined" | undefined {
    if (this.projection.hasAcceptedOffer()) return "handoff.accepted";
    const last = this.projection.lastOffer();
    return last?.status === "declined" ? "handoff.declined" : undefined;
  }
}
