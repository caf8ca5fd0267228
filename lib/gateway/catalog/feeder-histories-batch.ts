// The history feed's (feeder-histories.ts) pending catalog writes: rows are
// queued per session (a newer row replaces the queued one) and written
// together over a short window, or as soon as a batch is full.
import type { CatalogWrite } from "./store";

export interface WriteBatchOptions {
  /** Writes are batched over this window (and at most `batchRows` rows). */
  flushMs: number;
  batchRows: number;
}

export class WriteBatch {
  private readonly pending = new Map<string, CatalogWrite>();
  private timer: NodeJS.Timeout | null = null;

  /** `write` stores the rows of a flush (in queue order). */
  constructor(
    private readonly options: WriteBatchOptions,
    private readonly write: (rows: CatalogWrite[]) => void,
  ) {}

  /** The queued row of a session, if any. */
  get(sessionId: string): CatalogWrite | undefined {
    return this.pending.get(sessionId);
  }

  queue(w: CatalogWrite): void {
    const id = w.summary.metadata?.sessionId ?? "";
    this.pending.delete(id);
    this.pending.set(id, w);
    if (this.pending.size >= this.options.batchRows) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.options.flushMs);
    }
  }

  /** Write queued rows now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending.clear();
    this.write(rows);
  }
}
