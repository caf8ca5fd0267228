// Fan-out: who is told when something becomes durable. Listeners of one
// session's envelopes, of lifecycle events, of signals (never stored), of the
// policy registry and of durable list rows. A listener that throws is logged
// and the others are still told.
import type { PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionLifecycleEvent } from "@/lib/gen/macp/v1/core_pb";
import type { StoredListRow } from "../store/types";

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** One accepted envelope as delivered to subscribers. */
export interface Delivered {
  sequence: number;
  envelope: Envelope;
}

export type SessionListener = (d: Delivered) => void;
export type LifecycleListener = (ev: SessionLifecycleEvent) => void;
export type SignalListener = (env: Envelope) => void;
export type PolicyListener = (all: PolicyDescriptor[]) => void;
/** Durable list rows, in change order (one call per commit that wrote any). */
export type ListRowListener = (rows: readonly StoredListRow[]) => void;

export class Fanout {
  private readonly sessionListeners = new Map<string, Set<SessionListener>>();
  readonly lifecycle = new Set<LifecycleListener>();
  readonly signals = new Set<SignalListener>();
  readonly policies = new Set<PolicyListener>();
  readonly listRows = new Set<ListRowListener>();

  constructor(private readonly log: Logger) {}

  /** Live delivery of one session's envelopes. */
  listen(sessionId: string, listener: SessionListener): () => void {
    let set = this.sessionListeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.sessionListeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      const cur = this.sessionListeners.get(sessionId);
      if (!cur) return;
      cur.delete(listener);
      if (cur.size === 0) this.sessionListeners.delete(sessionId);
    };
  }

  publish(sessionId: string, d: Delivered): void {
    const listeners = this.sessionListeners.get(sessionId);
    if (!listeners) return;
    for (const l of listeners) l(d);
  }

  lifecycleEvent(make: () => SessionLifecycleEvent): void {
    if (this.lifecycle.size === 0) return;
    const ev = make();
    for (const l of this.lifecycle) l(ev);
  }

  signal(env: Envelope): void {
    for (const l of this.signals) l(env);
  }

  policiesChanged(all: PolicyDescriptor[]): void {
    for (const l of this.policies) l(all);
  }

  listRowsWritten(rows: readonly StoredListRow[]): void {
    for (const l of this.listRows) {
      try {
        l(rows);
      } catch (err) {
        this.log.error({ err }, "list-row listener failed");
      }
    }
  }

  /** Subscribers of session envelopes, over all sessions. */
  get sessionSubscribers(): number {
    let n = 0;
    for (const set of this.sessionListeners.values()) n += set.size;
    return n;
  }
}
