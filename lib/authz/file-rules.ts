// The protocol half of decide() for v0.1 file-based handoffs
// (lib/handoff-files), decided on the file's last valid snapshot.
import { ACTION_TARGET, canTransition, type ActionKind as FileActionKind, type HandoffStatus } from "@/lib/handoff-files/transitions";
import { ALLOW, deny, type Actor, type DecideContext, type Decision } from "./decision";
import { isValidParticipantId, shortParticipantName } from "./participants";
import type { FileAction } from "./rules";

const FILE_KIND: Readonly<Record<Exclude<FileAction, "fileOffer">, FileActionKind>> = Object.freeze({
  fileAccept: "accept",
  fileReject: "reject",
  fileComplete: "complete",
  fileFail: "fail",
  fileReoffer: "reoffer",
});

/** The action with its object, for "only they can …". */
const FILE_VERB_IT: Readonly<Record<FileActionKind, string>> = Object.freeze({
  accept: "accept it",
  reject: "turn it down",
  complete: "complete it",
  fail: "mark it as failed",
  reoffer: "offer it again",
});

/** The status each action starts from (the v0.1 state machine has one per action). */
const FILE_FROM: Readonly<Record<FileActionKind, HandoffStatus>> = Object.freeze({
  accept: "offered",
  reject: "offered",
  complete: "accepted",
  fail: "accepted",
  reoffer: "failed",
});

/**
 * The roles of the MACP task actions, on a v0.1 file: the offer's to_agent
 * (or anyone but the offerer when it is empty) accepts or turns it down; who
 * accepted it completes or fails it; who offered it offers it again. The
 * state machine (transitions.ts) says which step is possible at all.
 */
export function decideFile(user: Actor, action: FileAction, ctx: DecideContext): Decision {
  const me = user.participantId;
  const who = (id: string): string => {
    if (id === me) return "you";
    const named = ctx.nameOf?.(id);
    return named !== undefined && named !== "" ? named : shortParticipantName(id);
  };
  if (action === "fileOffer") {
    const to = ctx.fileOffer?.toAgent?.trim() ?? "";
    if (to === "") return ALLOW;
    if (to === me) return deny("invalid", "You can't offer a handoff to yourself.");
    if (!isValidParticipantId(to)) return deny("invalid", `"${to}" isn't a valid participant id (no spaces, at most 512 characters).`);
    return ALLOW;
  }
  const file = ctx.file;
  if (!file) return deny("not_found", "This handoff isn't loaded yet, or doesn't exist.");
  if (!file.present) return deny("not_found", "This handoff's file was removed.");
  if (!file.valid) return deny("state", "This file isn't a valid v0.1 handoff, so Baton leaves it alone.");
  const kind = FILE_KIND[action];
  const verb = FILE_VERB_IT[kind];
  if (!canTransition(file.status, ACTION_TARGET[kind])) {
    const by = file.toAgent !== "" && file.status !== "offered" ? ` by ${who(file.toAgent)}` : "";
    return deny("state", `This handoff is ${file.status}${by}; it can only be ${verbPast(kind)} while it is ${FILE_FROM[kind]}.`);
  }
  switch (kind) {
    case "accept":
    case "reject":
      if (file.toAgent !== "") {
        if (file.toAgent !== me) return deny("authority", `This handoff is offered to ${who(file.toAgent)}; only they can ${verb}.`);
        return ALLOW;
      }
      if (file.fromAgent === me) return deny("authority", `You offered this handoff; someone else has to ${verb}.`);
      return ALLOW;
    case "complete":
    case "fail":
      if (file.toAgent === "") {
        if (file.fromAgent === me) return deny("authority", `You offered this handoff; whoever took it has to ${verb}.`);
        return ALLOW;
      }
      if (file.toAgent !== me) return deny("authority", `Only ${who(file.toAgent)}, who accepted this handoff, can ${verb}.`);
      return ALLOW;
    case "reoffer":
      if (file.fromAgent !== me) return deny("authority", `Only ${who(file.fromAgent)}, who offered this handoff, can offer it again.`);
      return ALLOW;
  }
}

function verbPast(kind: FileActionKind): string {
  switch (kind) {
    case "accept":
      return "accepted";
    case "reject":
      return "turned down";
    case "complete":
      return "completed";
    case "fail":
      return "marked as failed";
    case "reoffer":
      return "offered again";
  }
}
