// Pause, step and pace for a demo run, shared by the player (which waits at
// its gate before every step) and whoever drives it (the console's
// ControlDemo). Pure state plus waiters; no timers of its own.

export type Pace = number | "instant";

export interface ControlSnapshot {
  paused: boolean;
  /** Steps played so far. */
  played: number;
  pace: Pace;
}

export class DemoControl {
  private paused: boolean;
  /** Steps allowed through the gate while paused (STEP). */
  private credits = 0;
  private waiters: (() => void)[] = [];
  private playedSteps = 0;

  constructor(
    private pace: Pace,
    private readonly onChange: (s: ControlSnapshot) => void = () => {},
    options: { paused?: boolean } = {},
  ) {
    this.paused = options.paused === true;
  }

  get snapshot(): ControlSnapshot {
    return { paused: this.paused, played: this.playedSteps, pace: this.pace };
  }

  /** Milliseconds to wait for a scripted pause of `ms` at the current pace (0 when instant). */
  scaled(ms: number): number {
    return this.pace === "instant" ? 0 : ms / this.pace;
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.changed();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.credits = 0;
    this.wake();
    this.changed();
  }

  /** While paused, let exactly one more step through. False when not paused. */
  step(): boolean {
    if (!this.paused) return false;
    this.credits += 1;
    this.wake();
    return true;
  }

  setPace(pace: Pace): void {
    this.pace = pace;
    this.changed();
  }

  /** The player played a step. */
  played(): void {
    this.playedSteps += 1;
    this.changed();
  }

  /** Resolves when the next step may be played (at once unless paused); rejects never, ends on abort. */
  async gate(signal?: AbortSignal): Promise<void> {
    while (this.paused && this.credits === 0) {
      if (signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal?.removeEventListener("abort", done);
          resolve();
        };
        this.waiters.push(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    if (this.paused) this.credits -= 1;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private changed(): void {
    this.onChange(this.snapshot);
  }
}
