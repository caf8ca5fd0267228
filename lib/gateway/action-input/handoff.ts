// Validation of the Handoff-mode actions: Offer, AttachContext (a file,
// markdown text or a link), Accept/Decline (Respond) and Commit.
import {
  HandoffOutcome,
  type AttachContextRequest,
  type CommitRequest,
  type OfferRequest,
  type RespondRequest,
} from "@/lib/gen/baton/v1/actions_pb";
import { checkContextBytes, checkLink } from "@/lib/actions/rules";
import {
  contentTypeOf,
  contractText,
  describe,
  invalidField,
  optionalIdOf,
  participantOf,
  sessionMessage,
  type SessionMessageInput,
} from "./fields";

export interface OfferInput extends SessionMessageInput {
  target: string;
  scope: string;
  reason: string;
}

export function parseOffer(req: OfferRequest): OfferInput {
  return {
    ...sessionMessage(req),
    target: participantOf("target", req.target),
    scope: contractText("scope", req.scope),
    reason: contractText("reason", req.reason),
  };
}

export interface ContextInput extends SessionMessageInput {
  handoffId: string;
  contentType: string;
  data: Uint8Array;
  /** Request field that holds the content, for size errors. */
  field: string;
}

export function parseAttachContext(req: AttachContextRequest): ContextInput {
  const base = { ...sessionMessage(req), handoffId: optionalIdOf("handoff_id", req.handoffId) };
  const content = req.content;
  switch (content.case) {
    case "file": {
      const contentType = contentTypeOf("content.file.content_type", content.value.contentType);
      const data = content.value.data;
      const essence = contentType.split(";")[0] as string;
      // Size is checked against the runtime's limit when the envelope is built (actions.ts).
      const problem = checkContextBytes(data, essence, Number.MAX_SAFE_INTEGER);
      if (problem?.code === "required") throw invalidField("content.file.data", "is empty");
      if (problem?.code === "not-utf8")
        throw invalidField("content.file.data", `is not UTF-8 text, but its content type is ${contentType}`);
      return { ...base, contentType, data, field: "content.file.data" };
    }
    case "markdown": {
      if (content.value.trim() === "") throw invalidField("content.markdown", "is empty");
      if (/\u0000/.test(content.value)) throw invalidField("content.markdown", "contains NUL characters");
      return {
        ...base,
        contentType: "text/markdown; charset=utf-8",
        data: new TextEncoder().encode(content.value),
        field: "content.markdown",
      };
    }
    case "link": {
      const { value, problem } = checkLink(content.value);
      if (problem?.code === "required") throw invalidField("content.link", "is empty");
      if (problem?.code === "too-long") throw invalidField("content.link", `is longer than ${problem.max} characters`);
      if (problem) throw invalidField("content.link", describe(problem, value));
      return { ...base, contentType: "text/uri-list", data: new TextEncoder().encode(`${value}\r\n`), field: "content.link" };
    }
    default:
      throw invalidField("content", "attach a file, markdown text or a link");
  }
}

export interface RespondInput extends SessionMessageInput {
  handoffId: string;
  reason: string;
}

export function parseRespond(req: RespondRequest): RespondInput {
  return {
    ...sessionMessage(req),
    handoffId: optionalIdOf("handoff_id", req.handoffId),
    reason: contractText("reason", req.reason),
  };
}

export interface CommitInput extends SessionMessageInput {
  positive: boolean;
  authorityScope: string;
  reason: string;
}

export function parseCommit(req: CommitRequest): CommitInput {
  if (req.outcome !== HandoffOutcome.ACCEPTED && req.outcome !== HandoffOutcome.DECLINED) {
    throw invalidField("outcome", "choose HANDOFF_OUTCOME_ACCEPTED or HANDOFF_OUTCOME_DECLINED");
  }
  return {
    ...sessionMessage(req),
    positive: req.outcome === HandoffOutcome.ACCEPTED,
    authorityScope: contractText("authorityScope", req.authorityScope),
    reason: contractText("reason", req.reason),
  };
}
