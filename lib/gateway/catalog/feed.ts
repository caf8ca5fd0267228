// What the catalog feeder's two upstream paths share: the row feed
// (feeder-rows.ts, Baton's runtime streams list rows) and the history feed
// (feeder-histories.ts, a plain MACP runtime: the console folds histories).
// CatalogFeeder (feeder.ts) picks one and owns the listeners both report to.
import type { CatalogStatus, SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import type { LifecycleUpdate } from "../lifecycle-hub";
import type { GatewayLogger } from "../logger";
import type { RuntimeReader } from "../runtime-client";
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
