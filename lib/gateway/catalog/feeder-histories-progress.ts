// What the history feed (feeder-histories.ts) says about itself: its
// CatalogStatus (how far the backfill got, the latest trouble), its progress
// in the log (every `progressMs` while reads are pending, once when they are
// done), and the one warning that the console's identity cannot read
// histories.
import { create } from "@bufbuild/protobuf";
import { CatalogStatusSchema, type CatalogStatus } from "@/lib/gen/baton/v1/console_pb";
import type { Limiter } from "@/lib/base/async-queue";
import type { FeedHost } from "./feed";

export class HistoryProgress {
  /** The latest trouble (empty when none), shown in the status. */
  message = "";
  private lastProgress = 0;
  private backfillLogged = false;
  private warnedUnreadable = false;

  constructor(
    private readonly host: Pick<FeedHost, "store" | "log">,
    private readonly limiter: Limiter,
    private readonly progressMs: number,
  ) {}

  status(): CatalogStatus {
    const { known, pending } = this.host.store.counts();
    const message = this.message || (pending > 0 ? `reading ${pending} session histories` : "");
    return create(CatalogStatusSchema, {
      backfilling: pending > 0,
      sessionsKnown: BigInt(known),
      sessionsIndexed: BigInt(known - pending),
      message,
    });
  }

  /** Progress in the log: every `progressMs` while reads are pending, and once when they are done. */
  report(force = false): void {
    const now = Date.now();
    // Once a backfill was reported, its end is reported as soon as it happens.
    if (!force && !this.backfillLogged && now - this.lastProgress < this.progressMs) return;
    const { known, pending } = this.host.store.counts();
    if (!force && pending > 0 && now - this.lastProgress < this.progressMs) return;
    this.lastProgress = now;
    if (pending === 0) {
      if (this.backfillLogged) this.host.log.info({ known }, `session catalog complete: ${known} sessions indexed`);
      this.backfillLogged = false;
      return;
    }
    // Open sessions waiting to be followed again are not worth a line each start.
    if (!this.backfillLogged && pending <= this.limiter.max && !force) return;
    this.backfillLogged = true;
    this.host.log.info(
      { known, indexed: known - pending, pending, reading: this.limiter.running },
      `session catalog: ${known - pending} of ${known} sessions indexed`,
    );
  }

  /** Once per process: a history was not readable by the console's identity. */
  warnUnreadable(sessionId: string): void {
    if (this.warnedUnreadable) return;
    this.warnedUnreadable = true;
    this.host.log.warn(
      { sessionId },
      "the console's runtime identity cannot read session history; list rows will show metadata only (use an observer identity)",
    );
  }
}
