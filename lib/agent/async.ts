// Small async helpers for the agent layer: an open-ended request queue for
// bidirectional streams, an abortable sleep and linked abort controllers.

/** A push-driven async iterable; iteration ends after `end()`. */
export class PushQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private wake: (() => void) | null = null;
  private ended = false;

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift() as T;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}

/** Sleep `ms`; resolves early (false) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** An AbortController that also aborts when `parent` does. */
export function linkedController(parent?: AbortSignal): AbortController {
  const ac = new AbortController();
  if (!parent) return ac;
  if (parent.aborted) {
    ac.abort(parent.reason);
    return ac;
  }
  const onAbort = () => ac.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  ac.signal.addEventListener("abort", () => parent.removeEventListener("abort", onAbort), { once: true });
  return ac;
}
