// `baton handoff start|offer|context|accept|decline|commit`

import { HandoffSession, readContextFile, checkContextSize, formatBytes } from "@/lib/agent";
import { parseDuration, UsageError, type FlagDef } from "../args";
import type { Command, CommandContext } from "../command";

const SESSION: FlagDef = {
  name: "session",
  type: "string",
  value: "<id>",
  description: "the handoff session (printed by `handoff start`)",
};
const HANDOFF_ID: FlagDef = {
  name: "handoff-id",
  type: "string",
  value: "<id>",
  description: "the offer (default: the active or latest offer)",
};
const REASON: FlagDef = { name: "reason", type: "string", value: "<text>", description: "why, in a few words" };

function noPositionals(ctx: CommandContext): void {
  if (ctx.args.length) throw new UsageError(`unexpected argument ${ctx.args[0]}`, ctx.command.path);
}

/** Participants from --participants (repeatable, comma-separated), with the caller added when known. */
export function participantsWithCaller(ctx: CommandContext, extra: readonly string[] = []): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    if (p !== "" && !out.includes(p)) out.push(p);
  };
  if (ctx.identity) add(ctx.identity);
  for (const p of ctx.flags.list("participants")) add(p);
  for (const p of extra) add(p);
  return out;
}

async function attach(ctx: CommandContext): Promise<HandoffSession> {
  return HandoffSession.attach(ctx.client(), ctx.flags.required("session"), { signal: ctx.signal });
}

const start: Command = {
  path: ["handoff", "start"],
  summary: "start a handoff session; prints its id",
  usage: "handoff start --participants <a,b,…> [--intent <text>] [--ttl 1h] [--policy <id>]",
  description:
    "Starts a Handoff-mode session with you (--as) as the initiator and current owner. You are added to the participants " +
    "automatically. Prints the new session id on stdout, so scripts can capture it: SID=$(baton … handoff start …).",
  flags: [
    {
      name: "participants",
      type: "list",
      value: "<ids>",
      description: "who takes part (repeat or comma-separate); must include every future target",
    },
    { name: "intent", type: "string", value: "<text>", description: 'what is being handed over (default: "handoff")' },
    { name: "ttl", type: "string", value: "<duration>", description: "session time to live, e.g. 30m, 2h (default 1h; max 24h)" },
    { name: "policy", type: "string", value: "<policy-id>", description: "governance policy to bind (default policy.default)" },
    { name: "context-id", type: "string", value: "<id>", description: "opaque id linking to an outside ticket or incident" },
    { name: "session", type: "string", value: "<id>", description: "use this session id instead of a fresh UUID" },
  ],
  examples: ['baton --as agent://oncall/alice handoff start --participants agent://oncall/bob --intent "payments on-call rotation"'],
  async run(ctx) {
    noPositionals(ctx);
    const participants = participantsWithCaller(ctx);
    if (participants.length < 2) throw new UsageError("a handoff needs at least two participants: pass --participants", ctx.command.path);
    const ttlMs = parseDuration(ctx.flags.str("ttl") ?? "1h", "--ttl");
    const session = new HandoffSession(ctx.client(), {
      ...(ctx.flags.str("session") ? { sessionId: ctx.flags.str("session") } : {}),
      ...(ctx.flags.str("policy") ? { policyVersion: ctx.flags.str("policy") } : {}),
    });
    const ack = await session.start({
      intent: ctx.flags.str("intent") ?? "handoff",
      participants,
      ttlMs,
      ...(ctx.flags.str("context-id") ? { contextId: ctx.flags.str("context-id") } : {}),
      signal: ctx.signal,
    });
    if (ctx.json) ctx.reportAck("start", ack, { participants, policy_version: session.policyVersion });
    else {
      ctx.out(`${session.sessionId}\n`);
      ctx.err(`✓ started handoff session ${session.sessionId} with ${participants.join(", ")}\n`);
    }
    return 0;
  },
};

const offer: Command = {
  path: ["handoff", "offer"],
  summary: "offer the responsibility to a participant (initiator only)",
  usage: "handoff offer --session <id> --to <participant> [--scope <text>] [--reason <text>] [--handoff-id <id>]",
  flags: [
    SESSION,
    { name: "to", type: "string", value: "<participant>", description: "the target who should take over" },
    { name: "scope", type: "string", value: "<text>", description: 'what exactly moves, e.g. "payments-api primary on-call"' },
    REASON,
    { name: "handoff-id", type: "string", value: "<id>", description: "id of the new offer (default h1, h2, …)" },
  ],
  examples: ['baton --as agent://oncall/alice handoff offer --session $SID --to agent://oncall/bob --scope "payments on-call"'],
  async run(ctx) {
    noPositionals(ctx);
    const to = ctx.flags.required("to");
    const s = await attach(ctx);
    const handoffId = ctx.flags.str("handoff-id") ?? s.nextHandoffId();
    const ack = await s.offer({
      handoffId,
      targetParticipant: to,
      scope: ctx.flags.str("scope") ?? "",
      reason: ctx.flags.str("reason") ?? "",
      signal: ctx.signal,
    });
    ctx.reportAck(`offer ${handoffId} → ${to}`, ack, { handoff_id: handoffId });
    return 0;
  },
};

const context: Command = {
  path: ["handoff", "context"],
  summary: "attach context (runbook, notes, state) to an offer",
  usage: "handoff context --session <id> (--file <path> | --text <text>) [--content-type <type>] [--handoff-id <id>]",
  description:
    "Sends a HandoffContext. With --file the content type is guessed from the extension (md → text/markdown, " +
    "json → application/json, txt → text/plain, anything else application/octet-stream); --content-type overrides it. " +
    "Files over 1 MiB are refused before anything is sent.",
  flags: [
    SESSION,
    { name: "file", type: "string", value: "<path>", description: "read the context from this file" },
    { name: "text", type: "string", value: "<text>", description: "inline context text (text/plain unless --content-type)" },
    { name: "content-type", type: "string", value: "<type>", description: "MIME type of the context" },
    HANDOFF_ID,
  ],
  examples: ["baton --as agent://oncall/alice handoff context --session $SID --file runbook.md"],
  async run(ctx) {
    noPositionals(ctx);
    const file = ctx.flags.str("file");
    const text = ctx.flags.str("text");
    if ((file === undefined) === (text === undefined)) throw new UsageError("give exactly one of --file or --text", ctx.command.path);
    const contentTypeFlag = ctx.flags.str("content-type");
    let blob: { contentType: string; context: Uint8Array; what: string };
    if (file !== undefined) {
      const f = readContextFile(file, contentTypeFlag !== undefined ? { contentType: contentTypeFlag } : {});
      blob = { contentType: f.contentType, context: f.context, what: `${f.name} (${f.contentType}, ${formatBytes(f.size)})` };
    } else {
      const bytes = new TextEncoder().encode(text);
      checkContextSize(bytes.byteLength, "--text");
      const ct = contentTypeFlag ?? "text/plain";
      blob = { contentType: ct, context: bytes, what: `${ct}, ${formatBytes(bytes.byteLength)}` };
    }
    const s = await attach(ctx);
    const ack = await s.sendContext({
      ...(ctx.flags.str("handoff-id") ? { handoffId: ctx.flags.str("handoff-id") } : {}),
      contentType: blob.contentType,
      context: blob.context,
      signal: ctx.signal,
    });
    const handoffId = s.projection.lastOffer()?.handoffId;
    ctx.reportAck(`context for ${ctx.flags.str("handoff-id") ?? handoffId ?? "offer"}: ${blob.what}`, ack, {
      handoff_id: ctx.flags.str("handoff-id") ?? handoffId,
      content_type: blob.contentType,
      bytes: blob.context.byteLength,
    });
    return 0;
  },
};

function respond(kind: "accept" | "decline"): Command {
  return {
    path: ["handoff", kind],
    summary: kind === "accept" ? "accept an offer made to you" : "decline an offer made to you",
    usage: `handoff ${kind} --session <id> [--handoff-id <id>] [--reason <text>]`,
    flags: [SESSION, HANDOFF_ID, REASON],
    examples: [`baton --as agent://oncall/bob handoff ${kind} --session $SID${kind === "decline" ? ' --reason "on leave this week"' : ""}`],
    async run(ctx) {
      noPositionals(ctx);
      const s = await attach(ctx);
      const input = {
        ...(ctx.flags.str("handoff-id") ? { handoffId: ctx.flags.str("handoff-id") } : {}),
        reason: ctx.flags.str("reason") ?? "",
        signal: ctx.signal,
      };
      const handoffId = input.handoffId ?? (s.projection.activeOffer() ?? s.projection.lastOffer())?.handoffId;
      const ack = kind === "accept" ? await s.acceptHandoff(input) : await s.decline(input);
      ctx.reportAck(`${kind} ${handoffId ?? "offer"}`, ack, { handoff_id: handoffId });
      return 0;
    },
  };
}

/** --outcome positive|negative → boolean, undefined when absent. */
export function outcomeFlag(ctx: CommandContext): boolean | undefined {
  const o = ctx.flags.str("outcome");
  if (o === undefined) return undefined;
  if (o === "positive" || o === "true") return true;
  if (o === "negative" || o === "false") return false;
  throw new UsageError("--outcome must be positive or negative", ctx.command.path);
}

export const COMMIT_FLAGS: readonly FlagDef[] = [
  SESSION,
  { name: "action", type: "string", value: "<action>", description: "outcome verb (default inferred from the session's state)" },
  REASON,
  {
    name: "authority-scope",
    type: "string",
    value: "<text>",
    description: "scope of authority for the decision (default: the offer's scope)",
  },
  {
    name: "outcome",
    type: "string",
    value: "positive|negative",
    description: "override outcome_positive (default inferred from the action)",
  },
];

const commit: Command = {
  path: ["handoff", "commit"],
  summary: "record the final outcome and resolve the session",
  usage: "handoff commit --session <id> [--action handoff.accepted|handoff.declined|…] [--reason <text>]",
  description:
    "Sends the terminal Commitment. Without --action, it is handoff.accepted once an offer was accepted and " +
    "handoff.declined when the latest offer was declined. outcome_positive is inferred from the action " +
    "(false for …declined/rejected/failed) unless --outcome is given. Only the commitment authority may commit " +
    "(the initiator under the default policy).",
  flags: COMMIT_FLAGS,
  examples: ["baton --as agent://oncall/alice handoff commit --session $SID"],
  async run(ctx) {
    noPositionals(ctx);
    const s = await attach(ctx);
    const action = ctx.flags.str("action") ?? s.suggestedAction();
    if (action === undefined) {
      throw new UsageError("no offer has been accepted or declined yet; wait for the target, or pass --action", ctx.command.path);
    }
    const offer = s.projection.acceptedOffer() ?? s.projection.lastOffer();
    const defaultReason =
      action === "handoff.accepted" && offer
        ? `${offer.acceptedBy ?? offer.target} takes over${offer.scope ? ` ${offer.scope}` : ""}`
        : offer
          ? `offer ${offer.handoffId} to ${offer.target} was ${offer.status}`
          : action;
    const outcomePositive = outcomeFlag(ctx);
    const ack = await s.commit({
      action,
      reason: ctx.flags.str("reason") ?? defaultReason,
      authorityScope: ctx.flags.str("authority-scope") ?? (offer?.scope || "handoff"),
      ...(outcomePositive !== undefined ? { outcomePositive } : {}),
      signal: ctx.signal,
    });
    ctx.reportAck(`commit ${action}`, ack, { action });
    return 0;
  },
};

export const handoffCommands: Command[] = [start, offer, context, respond("accept"), respond("decline"), commit];
