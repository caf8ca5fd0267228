// TaskSession (PROTOCOL.md §5): one agent's handle on a Task-mode session.
// The requester (initiator) starts, requests and commits; the assignee
// accepts or rejects, reports progress and completes or fails. Every call
// builds one envelope, sends it and resolves with the Ack.

import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { TASK_MODE, TASK_TYPES } from "@/lib/macp/constants";
import type { MacpClient } from "./client";
import { encodeContext } from "./content";
import { MacpUsageError } from "./errors";
import { TaskProjection } from "./projections";
import { ModeSession, type MessageOptions, type ModeSessionOptions } from "./session";

type Blob = Uint8Array | string | object;

export interface RequestInput extends MessageOptions {
  /** Default: "t1" (Task mode carries one task per session). */
  taskId?: string;
  title: string;
  instructions?: string;
  /** Empty: any participant other than the requester may take it. */
  requestedAssignee?: string;
  input?: Blob;
  deadlineUnixMs?: number;
}

export interface TaskResponseInput extends MessageOptions {
  /** Default: the session's task. */
  taskId?: string;
  reason?: string;
}

export interface UpdateInput extends MessageOptions {
  taskId?: string;
  /** Fraction done, 0..1. */
  progress: number;
  status?: string;
  message?: string;
  partialOutput?: Blob;
}

export interface CompleteInput extends MessageOptions {
  taskId?: string;
  output?: Blob;
  summary?: string;
}

export interface FailInput extends MessageOptions {
  taskId?: string;
  errorCode?: string;
  reason?: string;
  retryable?: boolean;
}

export class TaskSession extends ModeSession<TaskProjection> {
  readonly mode = TASK_MODE;
  protected readonly scopeName = "task";

  constructor(client: MacpClient, options: ModeSessionOptions<TaskProjection> = {}) {
    super(client, options.projection ?? new TaskProjection(), options);
  }

  /** Handle on an existing session, with its bound versions and history loaded. */
  static async attach(client: MacpClient, sessionId: string, opts: { signal?: AbortSignal } = {}): Promise<TaskSession> {
    const s = new TaskSession(client, { sessionId });
    await s.syncVersions(opts);
    await s.refresh(opts);
    return s;
  }

  private taskIdOr(given: string | undefined, what: string): string {
    if (given !== undefined && given !== "") return given;
    const id = this.projection.task?.taskId;
    if (!id) throw new MacpUsageError(`no task is known in session ${this.sessionId}; pass taskId to ${what}`);
    return id;
  }

  /** TaskRequest (requester only; one per session). */
  async request(input: RequestInput): Promise<Ack> {
    return this.post(
      TASK_TYPES.Request,
      {
        taskId: input.taskId || "t1",
        title: input.title,
        instructions: input.instructions ?? "",
        requestedAssignee: input.requestedAssignee ?? "",
        input: input.input === undefined ? new Uint8Array() : encodeContext(input.input),
        deadlineUnixMs: BigInt(Math.trunc(input.deadlineUnixMs ?? 0)),
      },
      input,
    );
  }

  /** TaskAccept: the caller becomes the active assignee. */
  async acceptTask(input: TaskResponseInput & { assignee?: string } = {}): Promise<Ack> {
    return this.post(
      TASK_TYPES.Accept,
      {
        taskId: this.taskIdOr(input.taskId, "acceptTask"),
        assignee: input.assignee ?? this.client.sender ?? "",
        reason: input.reason ?? "",
      },
      input,
    );
  }

  /** TaskReject by an eligible participant (or the active assignee, if the policy allows). */
  async reject(input: TaskResponseInput & { assignee?: string } = {}): Promise<Ack> {
    return this.post(
      TASK_TYPES.Reject,
      { taskId: this.taskIdOr(input.taskId, "reject"), assignee: input.assignee ?? this.client.sender ?? "", reason: input.reason ?? "" },
      input,
    );
  }

  /** SDK name of `reject`. */
  rejectTask(input: TaskResponseInput & { assignee?: string } = {}): Promise<Ack> {
    return this.reject(input);
  }

  /** TaskUpdate from the active assignee. */
  async update(input: UpdateInput): Promise<Ack> {
    if (!Number.isFinite(input.progress) || input.progress < 0 || input.progress > 1) {
      throw new MacpUsageError(`progress is a fraction between 0 and 1, got ${input.progress}`);
    }
    return this.post(
      TASK_TYPES.Update,
      {
        taskId: this.taskIdOr(input.taskId, "update"),
        status: input.status ?? "in_progress",
        progress: input.progress,
        message: input.message ?? "",
        partialOutput: input.partialOutput === undefined ? new Uint8Array() : encodeContext(input.partialOutput),
      },
      input,
    );
  }

  /** TaskComplete from the active assignee. */
  async complete(input: CompleteInput = {}): Promise<Ack> {
    return this.post(
      TASK_TYPES.Complete,
      {
        taskId: this.taskIdOr(input.taskId, "complete"),
        assignee: this.client.sender ?? "",
        output: input.output === undefined ? new Uint8Array() : encodeContext(input.output),
        summary: input.summary ?? "",
      },
      input,
    );
  }

  /** TaskFail from the active assignee. */
  async fail(input: FailInput = {}): Promise<Ack> {
    return this.post(
      TASK_TYPES.Fail,
      {
        taskId: this.taskIdOr(input.taskId, "fail"),
        assignee: this.client.sender ?? "",
        errorCode: input.errorCode ?? "",
        reason: input.reason ?? "",
        retryable: input.retryable ?? false,
      },
      input,
    );
  }

  /** `task.completed` / `task.failed` once a terminal report exists, else undefined. */
  suggestedAction(): "task.completed" | "task.failed" | undefined {
    if (this.projection.isCompleted()) return "task.completed";
    if (this.projection.isFailed()) return "task.failed";
    return undefined;
  }
}
