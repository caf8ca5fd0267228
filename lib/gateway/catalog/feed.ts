// What the catalog feeder's two upstream paths share: the row feed
// (feeder-rows.ts, Baton's runtime streams list rows) and the history feed
// (feeder-histories.ts, a plain MACP runtime: the console folds histories).
// CatalogFeeder (feeder.ts) picks one and owns the listeners both report to.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { CatalogStatus, SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { HandoffContextPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import type { LifecycleUpdate } from "../lifecycle-hub";
import type { GatewayLogger } from "../logger";
import type { RuntimeReader } from "../runtime-client";
import { isTerminalState } from "../sequencer";
import type { CatalogStore } from "./store";

export const OPEN_STATES: ReadonlySet<SessionState> = new Set([SessionState.OPEN, SessionState.SUSPENDED]);

/** What a feed gets from the feeder. */
export interface FeedHost {
  readonly store: CatalogStore;
  readonly runtime: RuntimeReader;
  readonly log: GatewayLogger;
  /** Aborts when the feeder closes. */
  readonly signal: AbortSignal;
  /** After every catalog write, with the new version. */
  written(version: number): void;
  /** Lifecycle changes for session streams (SubscribeSession). */
  lifecycle(update: LifecycleUpdate): void;
  /** The inbox: an open session, caught up, changed (or was delivered for the first time). */
  openUpdate(meta: SessionMetadata, view: SessionView): void;
  /** The inbox: the session is no longer open, or no longer followed. */
  openClosed(sessionId: string): void;
  /** The inbox: every open session known at start was delivered at least once. */
  openLoaded(): void;
}

/** One upstream path filling the catalog. */
export interface Feed {
  readonly mode: "rows" | "histories";
  start(): void;
  status(): CatalogStatus;
  /** A list row fresher than the stored one (followed or queued), if any. */
  fresh(sessionId: string): SessionSummary | undefined;
  /** Caught-up open sessions (what a new inbox observer starts from). */
  openViews(): Iterable<{ meta: SessionMetadata; view: SessionView }>;
  /** Whether openLoaded() was reported. */
  readonly loaded: boolean;
  /** Sessions followed or being read right now. */
  readonly followedCount: number;
  /** Write what is queued now. */
  flush(): void;
  close(): void;
}

/** Who must act next in a session (the inbox's candidates): offer target, committer, task assignee. */
export function nextActors(meta: SessionMetadata, view: SessionView | undefined): string[] {
  if (!view?.started || isTerminalState(meta.state) || view.commitment) return [];
  const out = new Set<string>();
  const offers = view.handoff?.offers ?? [];
  const last = offers.at(-1);
  if (last && (last.status === "offered" || last.status === "context_sent")) out.add(last.target);
  if (offers.some((o) => o.status === "accepted") || last?.status === "declined") out.add(view.currentOwner ?? view.initiator);
  const task = view.task?.task;
  if (task) {
    if (task.terminalReport) out.add(task.requester);
    else {
      const assignee = task.activeAssignee ?? task.requestedAssignee;
      if (assignee) out.add(assignee);
    }
  }
  out.delete("");
  return [...out];
}

/** The envelope as the catalog folds it: a context's bytes dropped (the list never shows them). */
export function leanEnvelope(env: Envelope): Envelope {
  if (env.messageType !== "HandoffContext" || env.payload.length <= 256) return env;
  try {
    const p = fromBinary(HandoffContextPayloadSchema, env.payload);
    return { ...env, payload: toBinary(HandoffContextPayloadSchema, { ...p, context: new Uint8Array(0) }) };
  } catch {
    return { ...env, payload: new Uint8Array(0) };
  }
}
