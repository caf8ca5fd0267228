// The current state of one session, read fresh for an action: metadata from
// GetSession, and the accepted history folded with the shared reducer into a
// SessionView, plus which message_ids are already in it (for retries).
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { SessionStartPayloadSchema, type SessionMetadata, type SessionStartPayload } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { CORE_TYPES } from "@/lib/macp/constants";
import { Draft } from "@/lib/macp/projections/draft";
import { emptySessionView, reduceSessionDraft, type SessionLifecycle, type SessionView } from "@/lib/macp/projections/session";
import { linkedController } from "@/lib/base/abort";
import { upstreamError } from "./errors";
import type { RuntimeReader } from "./runtime-client";
import { historyCount } from "@/lib/macp/projections/summary";

export interface AcceptedMessage {
  sender: string;
  messageType: string;
}

export interface LoadedSession {
  meta: SessionMetadata;
  view: SessionView;
  /** Decoded SessionStart payload (extensions, context id), when readable. */
  start?: SessionStartPayload;
  /** Every accepted message_id in the session. */
  accepted: ReadonlyMap<string, AcceptedMessage>;
}

/** The runtime's lifecycle state in the reducer's vocabulary. */
export function lifecycleOf(state: SessionState): SessionLifecycle {
  switch (state) {
    case SessionState.RESOLVED:
      return "Resolved";
    case SessionState.EXPIRED:
      return "Expired";
    case SessionState.SUSPENDED:
      return "Suspended";
    case SessionState.CANCELLED:
      return "Cancelled";
    default:
      return "Open";
  }
}

/**
 * Read a session's metadata and fold its whole history. NOT_FOUND for an
 * unknown session; UNAVAILABLE when the runtime cannot be reached or the
 * history does not arrive within `timeoutMs`.
 */
export async function loadSession(
  runtime: RuntimeReader,
  sessionId: string,
  signal?: AbortSignal,
  timeoutMs = 10_000,
): Promise<LoadedSession> {
  let meta: SessionMetadata;
  try {
    meta = await runtime.getSession(sessionId, signal);
  } catch (e) {
    const ce = upstreamError(e, `session ${sessionId}`);
    if (ce.code === Code.NotFound) throw new ConnectError(`There is no session ${sessionId} on the runtime.`, Code.NotFound);
    throw ce;
  }
  const head = historyCount(meta);
  let view = emptySessionView(sessionId, meta.mode);
  // The whole history folds as one batch (linear in its length); `view` is not
  // seen by anyone until the loop is over.
  const draft = new Draft();
  const accepted = new Map<string, AcceptedMessage>();
  let start: SessionStartPayload | undefined;
  let count = 0;
  const ac = linkedController(signal);
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  try {
    for await (const env of runtime.subscribeSession(sessionId, 0, ac.signal)) {
      if (env.messageId !== "") {
        if (accepted.has(env.messageId)) continue;
        accepted.set(env.messageId, { sender: env.sender, messageType: env.messageType });
      }
      count += 1;
      if (env.messageType === CORE_TYPES.SessionStart && !start) {
        try {
          start = fromBinary(SessionStartPayloadSchema, env.payload);
        } catch {
          // The reducer ignores it too.
        }
      }
      view = reduceSessionDraft(view, { envelope: env, sequence: count }, draft);
      if (count >= head) break;
    }
  } catch (e) {
    if (signal?.aborted) throw upstreamError(e, `session ${sessionId}`);
    if (!ac.signal.aborted) throw upstreamError(e, `session ${sessionId}`);
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (count < head) {
    throw new ConnectError(
      `could not read the history of session ${sessionId} from the runtime in time (${count} of ${head} messages); try again`,
      Code.Unavailable,
    );
  }
  return { meta, view, accepted, ...(start ? { start } : {}) };
}
