// HandoffProjection and TaskProjection: the SDKs' stateful projection classes,
// as thin wrappers over the pure reducers in lib/macp/projections. All phase
// and status logic lives in those reducers; these classes only hold the
// current state, deduplicate by message_id and expose the SDK helper names.

import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import * as handoff from "@/lib/macp/projections/handoff";
import * as task from "@/lib/macp/projections/task";
import type { CommitmentRecord, SessionEvent } from "@/lib/macp/projections/types";

type Input = Envelope | SessionEvent;

function asEvent(input: Input): SessionEvent {
  return "envelope" in input ? input : { envelope: input };
}

/** Shared bookkeeping: state, applied-event log and message_id dedup. */
abstract class Projection<S> {
  protected current: S;
  private readonly seen = new Set<string>();
  private readonly applied: SessionEvent[] = [];

  protected constructor(
    private readonly initial: S,
    private readonly reducer: (state: S, event: SessionEvent) => S,
  ) {
    this.current = initial;
  }

  /**
   * Fold one accepted envelope (or sequenced event) into the state. An
   * envelope whose message_id was already applied is ignored. Returns true
   * when the state changed.
   */
  apply(input: Input): boolean {
    const event = asEvent(input);
    const id = event.envelope.messageId;
    if (id !== "") {
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    this.applied.push(event);
    const before = this.current;
    this.current = this.reducer(this.current, event);
    return this.current !== before;
  }

  /** Forget everything applied so far (before re-reading a session's history). */
  reset(): void {
    this.current = this.initial;
    this.seen.clear();
    this.applied.length = 0;
  }

  /** SDK name for `apply`. */
  applyEnvelope(input: Input): boolean {
    return this.apply(input);
  }

  /** Fold many events in order. */
  applyAll(inputs: Iterable<Input>): this {
    for (const i of inputs) this.apply(i);
    return this;
  }

  /** Whether an envelope with this message_id has been applied. */
  has(messageId: string): boolean {
    return this.seen.has(messageId);
  }

  /** The immutable state produced by the reducer. */
  get state(): S {
    return this.current;
  }

  /** Events applied so far, in order. */
  get events(): readonly SessionEvent[] {
    return this.applied;
  }
}

export class HandoffProjection extends Projection<handoff.HandoffState> {
  constructor() {
    super(handoff.initialHandoffState, handoff.reduceHandoff);
  }

  static from(events: Iterable<Input>): HandoffProjection {
    return new HandoffProjection().applyAll(events);
  }

  get phase(): handoff.HandoffPhase {
    return this.current.phase;
  }
  get offers(): readonly handoff.HandoffRecord[] {
    return this.current.offers;
  }
  get commitment(): CommitmentRecord | undefined {
    return this.current.commitment;
  }
  get isCommitted(): boolean {
    return handoff.isCommitted(this.current);
  }
  /** outcome_positive of the commitment (false is kept), undefined before one. */
  get isPositiveOutcome(): boolean | undefined {
    return handoff.isPositiveOutcome(this.current);
  }

  getHandoff(handoffId: string): handoff.HandoffRecord | undefined {
    return handoff.getHandoff(this.current, handoffId);
  }
  isAccepted(handoffId: string): boolean {
    return handoff.isAccepted(this.current, handoffId);
  }
  isDeclined(handoffId: string): boolean {
    return handoff.isDeclined(this.current, handoffId);
  }
  hasAcceptedOffer(): boolean {
    return handoff.hasAcceptedOffer(this.current);
  }
  acceptedOffer(): handoff.HandoffRecord | undefined {
    return handoff.acceptedOffer(this.current);
  }
  pendingHandoffs(): handoff.HandoffRecord[] {
    return handoff.pendingHandoffs(this.current);
  }
  activeOffer(): handoff.HandoffRecord | undefined {
    return handoff.activeOffer(this.current);
  }
  lastOffer(): handoff.HandoffRecord | undefined {
    return handoff.lastOffer(this.current);
  }
  /** `{ [handoff_id]: { disposition } }`, the runtime-side vocabulary. */
  offerDispositions(): Record<string, { disposition: handoff.HandoffDisposition }> {
    return handoff.offerDispositions(this.current);
  }
}

export class TaskProjection extends Projection<task.TaskState> {
  constructor() {
    super(task.initialTaskState, task.reduceTask);
  }

  static from(events: Iterable<Input>): TaskProjection {
    return new TaskProjection().applyAll(events);
  }

  get phase(): task.TaskPhase {
    return this.current.phase;
  }
  /** The session's task (Task mode carries at most one). */
  get task(): task.TaskRecord | undefined {
    return this.current.task;
  }
  get commitment(): CommitmentRecord | undefined {
    return this.current.commitment;
  }
  get isCommitted(): boolean {
    return task.isCommitted(this.current);
  }
  get isPositiveOutcome(): boolean | undefined {
    return task.isPositiveOutcome(this.current);
  }

  activeTasks(): task.TaskRecord[] {
    return task.activeTasks(this.current);
  }
  activeAssignee(): string | undefined {
    return task.activeAssignee(this.current);
  }
  /** Latest reported progress (0..1), undefined before any update or completion. */
  latestProgress(): number | undefined {
    return task.latestProgress(this.current);
  }
  progressOf(taskId?: string): number {
    return task.progressOf(this.current, taskId);
  }
  terminalReport(): task.TaskTerminalReport | undefined {
    return task.terminalReport(this.current);
  }
  isAccepted(taskId?: string): boolean {
    return task.isAccepted(this.current, taskId);
  }
  isCompleted(taskId?: string): boolean {
    return task.isCompleted(this.current, taskId);
  }
  /** SDK alias of `isCompleted`. */
  isComplete(taskId?: string): boolean {
    return task.isComplete(this.current, taskId);
  }
  isFailed(taskId?: string): boolean {
    return task.isFailed(this.current, taskId);
  }
  isRetryable(taskId?: string): boolean {
    return task.isRetryable(this.current, taskId);
  }
}
