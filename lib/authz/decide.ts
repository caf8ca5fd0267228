// Authorization decisions for signed-in people. Pure and synchronous, with no
// Node imports: the browser calls it to enable or explain a button, and the
// server calls the same function before it sends anything to the runtime.
//
// A decision combines two things:
//  1. the console role (roles.ts): may this kind of user do this at all?
//  2. the protocol: would the runtime accept it from this participant in the
//     session's current state? This mirrors the runtime's authority matrix and
//     mode rules (PROTOCOL.md §3.6–3.7, §4.3–4.6, §5.3–5.6, §10.3), so a button
//     the UI enables is one the runtime will not reject for those reasons.
//
// Protocol authority always binds to the user's own participant id, whatever
// their role: an admin cannot accept an offer made to someone else, because
// the runtime would refuse it. The one exception is `cancel`, which an admin
// may do for any open session (the gateway then needs a runtime identity with
// cancel rights for it; see §3.7).
//
// Reasons are plain sentences meant for the person looking at the button.//
// The pieces: rules.ts (the actions and the role each needs), decision.ts
// (Decision, DecideContext), session-rules.ts (the protocol in a MACP
// session), file-rules.ts (v0.1 handoff files), participants.ts (ids and
// names). decide() below is the one entry point.

import type { SessionView } from "@/lib/macp/projections/session";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { roleAtLeast, type Role } from "@/lib/authz/roles";
import { ALLOW, deny, type Actor, type DecideContext, type Decision } from "./decision";
import { decideFile } from "./file-rules";
import { isValidParticipantId } from "./participants";
import { ACTIONS, MINIMUM_ROLE, isFileAction, type Action } from "./rules";
import { Decider } from "./session-rules";

export type { Actor, DecideContext, Decision, DenyCode, FileHandoffFacts } from "./decision";
export { isValidParticipantId, shortParticipantName } from "./participants";
export { ACTIONS, FILE_ACTIONS, MINIMUM_ROLE, isAction, isFileAction, type Action, type FileAction } from "./rules";

/** Decide whether `user` may perform `action` on the session shown by `view`. */
export function decide(user: Actor, view: SessionView | undefined, action: Action, ctx: DecideContext = {}): Decision {
  const roleDecision = checkRole(user.role, action);
  if (!roleDecision.allowed) return roleDecision;
  if (action === "view" || action === "manageUsers" || action === "managePolicies") return ALLOW;

  if (!isValidParticipantId(user.participantId)) {
    return deny("no_identity", "Your account has no valid participant id, so it can't act in sessions. Ask an admin to set one.");
  }
  if (action === "runDemo" || action === "manageHandoffTemplates") return ALLOW;
  if (action === "startSession") return checkStart(user, ctx);
  if (action === "cancelEscalation") return checkCancelEscalation(user, ctx);
  if (isFileAction(action)) return decideFile(user, action, ctx);

  if (!view || !view.started) return deny("not_found", "This session isn't loaded yet, or doesn't exist.");
  const d = new Decider(user, view, ctx);
  return d.decide(action);
}

/** Every action's decision at once, for rendering a toolbar. */
export function decideAll(user: Actor, view: SessionView | undefined, ctx: DecideContext = {}): Record<Action, Decision> {
  const out = {} as Record<Action, Decision>;
  for (const a of ACTIONS) out[a] = decide(user, view, a, ctx);
  return out;
}

function checkRole(role: Role, action: Action): Decision {
  const minimum = MINIMUM_ROLE[action];
  if (roleAtLeast(role, minimum)) return ALLOW;
  switch (action) {
    case "manageUsers":
      return deny("role", "Only an admin can manage users.");
    case "managePolicies":
      return deny("role", "Only an admin can manage policies.");
    case "runDemo":
      return deny("role", "Only an admin can run demos from the console (anyone can run npm run demo).");
    default:
      return deny("role", "Your account is read-only (viewer): you can watch sessions but not act in them.");
  }
}

function checkCancelEscalation(user: Actor, ctx: DecideContext): Decision {
  const owner = ctx.escalation?.owner;
  if (owner === undefined || owner === user.participantId || roleAtLeast(user.role, "admin")) return ALLOW;
  return deny("authority", "Only the person who set up this escalation (or an admin) can cancel it.");
}

function checkStart(user: Actor, ctx: DecideContext): Decision {
  const start = ctx.start;
  if (!start) return ALLOW;
  if (start.mode !== undefined && start.mode !== HANDOFF_MODE && start.mode !== TASK_MODE) {
    return deny("wrong_mode", "Baton can only start handoff and task sessions.");
  }
  if (start.participants !== undefined) {
    const seen = new Set<string>();
    for (const raw of start.participants) {
      const p = raw.trim();
      if (p === "") return deny("invalid", "A participant id is empty.");
      if (!isValidParticipantId(p)) return deny("invalid", `"${raw}" isn't a valid participant id (no spaces, at most 512 characters).`);
      if (seen.has(p)) return deny("invalid", `${p} is listed twice.`);
      seen.add(p);
    }
    if (!seen.has(user.participantId)) {
      return deny("invalid", `You (${user.participantId}) must be one of the participants, because you start the session.`);
    }
    if (seen.size < 2) return deny("invalid", "Add at least one other participant.");
    if (seen.size > 1000) return deny("invalid", "A session can have at most 1000 participants.");
  }
  return ALLOW;
}
