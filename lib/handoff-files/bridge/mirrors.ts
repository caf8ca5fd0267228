// The open sessions the bridge follows live: one StreamSession subscription
// each, folded into a TaskProjection, at most `max` at once. A new event
// queues the handoff again; so does a stream that ends by itself.
import type { MacpClient, TaskProjection } from "@/lib/agent";
import { Blocked } from "./clients";

export interface Mirror {
  taskId: string;
  projection: TaskProjection;
  ac: AbortController;
}

export interface SessionMirrorsOptions {
  /** Sessions followed at once. */
  max: number;
  /** The session changed (or its stream ended): look at the handoff again. */
  changed: (taskId: string) => void;
  /** The stream failed (not stopped by the bridge). */
  failed: (taskId: string, message: string) => void;
}

export class SessionMirrors {
  private readonly mirrors = new Map<string, Mirror>();

  constructor(private readonly o: SessionMirrorsOptions) {}

  get size(): number {
    return this.mirrors.size;
  }

  atCapacity(): boolean {
    return this.mirrors.size >= this.o.max;
  }

  get(sessionId: string): Mirror | undefined {
    return this.mirrors.get(sessionId);
  }

  /** Follow an open session after the `after` events already folded; throws Blocked at capacity. */
  follow(client: MacpClient, sessionId: string, taskId: string, projection: TaskProjection, after: number): Mirror {
    if (this.atCapacity()) throw new Blocked("at capacity");
    const mirror: Mirror = { taskId, projection, ac: new AbortController() };
    this.mirrors.set(sessionId, mirror);
    void (async () => {
      try {
        for await (const ev of client.subscribe(sessionId, after, { signal: mirror.ac.signal })) {
          if (mirror.projection.apply(ev)) this.o.changed(mirror.taskId);
        }
      } catch (e) {
        if (!mirror.ac.signal.aborted) this.o.failed(mirror.taskId, `session stream ended: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        if (this.mirrors.get(sessionId) === mirror) this.mirrors.delete(sessionId);
        if (!mirror.ac.signal.aborted) this.o.changed(mirror.taskId);
      }
    })();
    return mirror;
  }

  drop(sessionId: string): void {
    const m = this.mirrors.get(sessionId);
    if (!m) return;
    m.ac.abort();
    this.mirrors.delete(sessionId);
  }

  dropAll(): void {
    for (const m of this.mirrors.values()) m.ac.abort();
    this.mirrors.clear();
  }
}
