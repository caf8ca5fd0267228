// Lifecycle changes of sessions (WatchSessions events) as the gateway passes
// them on. The console holds ONE upstream WatchSessions stream for its whole
// lifetime, in the catalog feeder (lib/gateway/catalog/feeder.ts); session
// streams (SubscribeSession) listen to it through this small interface to
// learn when their session's state or deadline changes.
import type { SessionLifecycleEvent, SessionMetadata } from "@/lib/gen/macp/v1/core_pb";

export type LifecycleUpdate =
  | { kind: "event"; event: SessionLifecycleEvent }
  /** A batch of current metadata (e.g. a reconciliation); listeners pick the sessions they follow. */
  | { kind: "list"; sessions: SessionMetadata[] }
  /** The runtime could not be reached; `listed` is false until the catalog has seen it once. */
  | { kind: "error"; error: unknown; listed: boolean };

export type LifecycleListener = (update: LifecycleUpdate) => void;

export interface LifecycleSource {
  /** Start receiving updates; call the returned function to stop. */
  acquire(listener: LifecycleListener): () => void;
}
