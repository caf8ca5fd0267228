// The kernel's write path, shared by Send and the lifecycle: hand a session's
// records to the store's group commit (with its index summary when its state
// changed, and its list row), run what depends on them only once they are
// durable, and on a storage failure rebuild memory from the store so that it
// never runs ahead of disk. Also how a durable envelope is published and a
// lifecycle event emitted.
import { create, toBinary } from "@bufbuild/protobuf";
import { MACP_VERSION, RUNTIME_SENDER } from "@/lib/macp/constants";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { SessionLifecycleEventSchema, type SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { reject } from "../errors";
import type { LogRecord, RecordKind, Store } from "../store/types";
import type { Fanout, Logger } from "./fanout";
import type { PolicyRegistry } from "./policies";
import type { Residents } from "./residents";
import { residentListRow, sessionMetadata, sessionSummary, type Session } from "./session";

export class SessionWrites {
  /** Bumped on every rebuild after a storage failure. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly residents: Residents,
    private readonly policies: PolicyRegistry,
    private readonly fanout: Fanout,
    private readonly log: Logger,
    private readonly clock: () => number,
  ) {}

  /**
   * Hand records to the store; run `onDurable` once they are on disk. With
   * `summarise` (the session started or changed state), the session's row in
   * the store's session index is rewritten in the same transaction; a closed
   * session is answered from that row. Its live metadata while it is open is
   * served from memory, so plain envelopes do not rewrite it. The session's
   * list row is written with every record (see listRow). On a storage
   * failure the kernel reloads from the store and the caller gets
   * INTERNAL_ERROR (the message was not accepted; retrying is safe).
   */
  async persist(s: Session, records: LogRecord[], summarise: boolean, onDurable: () => void): Promise<void> {
    const gen = this.generation;
    for (const r of records) if (r.recvMs > s.touchedMs) s.touchedMs = r.recvMs;
    const write = this.store.append(records, summarise ? [sessionSummary(s)] : undefined, [residentListRow(s)]);
    s.tail = write;
    try {
      await write;
    } catch (e) {
      if (gen === this.generation) {
        this.generation++;
        this.log.error({ err: e, sessionId: s.id }, "storage commit failed; rebuilding runtime state from storage");
        try {
          this.policies.load();
          this.residents.reload();
        } catch (e2) {
          this.log.error({ err: e2 }, "rebuild after storage failure failed");
        }
      }
      reject("INTERNAL_ERROR", `storage failure: ${(e as Error).message}`);
    }
    if (gen !== this.generation) reject("INTERNAL_ERROR", "storage failure in the same commit group");
    onDurable();
  }

  publish(s: Session, seq: number, env: Envelope): void {
    s.durableSeq = seq;
    this.fanout.publish(s.id, { sequence: seq, envelope: env });
  }

  emitLifecycle(type: EventType, s: Session): void {
    this.fanout.lifecycleEvent(() =>
      create(SessionLifecycleEventSchema, {
        eventType: type,
        session: sessionMetadata(s),
        observedAtUnixMs: BigInt(this.clock()),
      }),
    );
  }

  /** A record the runtime writes into a session's log (cancel, suspend, resume, expiry), as an envelope. */
  annotation(s: Session, type: string, payload: Uint8Array, at: number): Envelope {
    return create(EnvelopeSchema, {
      macpVersion: MACP_VERSION,
      mode: s.mode,
      messageType: type,
      messageId: "",
      sessionId: s.id,
      sender: RUNTIME_SENDER,
      timestampUnixMs: BigInt(at),
      payload,
    });
  }

  /** Write an annotation (it always rewrites the session's index row: the state changed). */
  writeAnnotation(s: Session, kind: RecordKind, env: Envelope, at: number, onDurable: () => void): Promise<void> {
    return this.persist(s, [{ sessionId: s.id, kind, seq: 0, recvMs: at, envelope: toBinary(EnvelopeSchema, env) }], true, onDurable);
  }
}
