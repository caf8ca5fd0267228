import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  describeStreamError,
  isFatalStreamError,
  runResilientStream,
  type RunnerDirective,
  type RunnerStatus,
} from "@/lib/client/stream-runner";

/** A scripted server: each connection yields its items, then ends or throws. */
type Step = { msg: string } | { wait: number } | { throw: unknown } | { hang: true };

function scripted(connections: Step[][]) {
  let n = 0;
  const opened: number[] = [];
  return {
    opened,
    connect(signal: AbortSignal): AsyncIterable<string> {
      const steps = connections[n] ?? [{ hang: true }];
      n += 1;
      opened.push(n);
      return (async function* () {
        for (const step of steps) {
          if ("msg" in step) yield step.msg;
          else if ("wait" in step) await new Promise((r) => setTimeout(r, step.wait));
          else if ("throw" in step) throw step.throw;
          else
            await new Promise<void>((_, reject) => {
              if (signal.aborted) reject(new Error("aborted"));
              signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
            });
        }
      })();
    },
  };
}

function collect() {
  const statuses: RunnerStatus[] = [];
  const messages: string[] = [];
  return { statuses, messages, onStatus: (s: RunnerStatus) => statuses.push(s) };
}

describe("runResilientStream", () => {
  it("reconnects after a dropped stream and stops on end", async () => {
    const server = scripted([
      [{ msg: "a" }, { throw: new Error("network down") }],
      [{ msg: "b" }, { msg: "end" }],
    ]);
    const c = collect();
    const connects: number[] = [];
    const h = runResilientStream(
      {
        connect: server.connect,
        onConnect: (n) => connects.push(n),
        onMessage: (m): RunnerDirective => {
          c.messages.push(m);
          return m === "end" ? "end" : "continue";
        },
        onStatus: c.onStatus,
        backoffMs: () => 5,
      },
      new AbortController().signal,
    );
    await h.done;
    expect(c.messages).toEqual(["a", "b", "end"]);
    expect(connects).toEqual([1, 2]);
    expect(c.statuses.map((s) => s.phase)).toEqual(["connecting", "open", "waiting", "connecting", "open", "ended"]);
    const waiting = c.statuses.find((s) => s.phase === "waiting");
    expect(waiting && waiting.phase === "waiting" ? waiting.error : "").toBe("network down");
  });

  it("reconnects when heartbeats stop", async () => {
    const server = scripted([[{ msg: "a" }, { hang: true }], [{ msg: "end" }]]);
    const c = collect();
    const h = runResilientStream(
      {
        connect: server.connect,
        onMessage: (m): RunnerDirective => (c.messages.push(m), m === "end" ? "end" : "continue"),
        onStatus: c.onStatus,
        heartbeatTimeoutMs: 30,
        backoffMs: () => 1,
      },
      new AbortController().signal,
    );
    await h.done;
    expect(c.messages).toEqual(["a", "end"]);
    const waiting = c.statuses.find((s) => s.phase === "waiting");
    expect(waiting && waiting.phase === "waiting" ? waiting.error : "").toMatch(/heartbeat/i);
  });

  it("resyncs at once, without backoff", async () => {
    const server = scripted([[{ msg: "gap" }], [{ msg: "end" }]]);
    const c = collect();
    const h = runResilientStream(
      {
        connect: server.connect,
        onMessage: (m): RunnerDirective => (m === "gap" ? "resync" : "end"),
        onStatus: c.onStatus,
        backoffMs: () => 60_000,
      },
      new AbortController().signal,
    );
    await h.done;
    expect(server.opened).toEqual([1, 2]);
    expect(c.statuses.some((s) => s.phase === "waiting")).toBe(false);
  });

  it("stops on a fatal error", async () => {
    const server = scripted([[{ throw: new ConnectError("no such session", Code.NotFound) }]]);
    const c = collect();
    await runResilientStream({ connect: server.connect, onMessage: () => "continue", onStatus: c.onStatus }, new AbortController().signal)
      .done;
    expect(c.statuses.at(-1)).toEqual({ phase: "ended", fatal: true, error: "Not found" });
  });

  it("drains after end-soon, then ends", async () => {
    const server = scripted([[{ msg: "terminal" }, { msg: "late" }, { hang: true }]]);
    const c = collect();
    await runResilientStream(
      {
        connect: server.connect,
        onMessage: (m): RunnerDirective => (c.messages.push(m), m === "terminal" ? "end-soon" : "continue"),
        onStatus: c.onStatus,
        endDrainMs: 20,
      },
      new AbortController().signal,
    ).done;
    expect(c.messages).toEqual(["terminal", "late"]);
    expect(c.statuses.at(-1)).toEqual({ phase: "ended", fatal: false });
  });

  it("aborts the connection when the outer signal fires", async () => {
    const server = scripted([[{ msg: "a" }, { hang: true }]]);
    const c = collect();
    const outer = new AbortController();
    const h = runResilientStream({ connect: server.connect, onMessage: () => "continue", onStatus: c.onStatus }, outer.signal);
    await new Promise((r) => setTimeout(r, 10));
    outer.abort();
    await h.done;
    expect(server.opened).toEqual([1]);
    expect(c.statuses.at(-1)?.phase).toBe("open");
  });

  it("retryNow skips the backoff wait", async () => {
    const server = scripted([[{ throw: new Error("down") }], [{ msg: "end" }]]);
    const c = collect();
    const h = runResilientStream(
      { connect: server.connect, onMessage: () => "end", onStatus: c.onStatus, backoffMs: () => 60_000 },
      new AbortController().signal,
    );
    await new Promise((r) => setTimeout(r, 10));
    h.retryNow();
    await h.done;
    expect(server.opened).toEqual([1, 2]);
  });
});

describe("runResilientStream directives from outside onMessage", () => {
  it("command('resync') reconnects at once and command('end') stops", async () => {
    const server = scripted([
      [{ msg: "a" }, { hang: true }],
      [{ msg: "b" }, { hang: true }],
    ]);
    const c = collect();
    const h = runResilientStream(
      { connect: server.connect, onMessage: (m) => (c.messages.push(m), "continue"), onStatus: c.onStatus, backoffMs: () => 60_000 },
      new AbortController().signal,
    );
    await new Promise((r) => setTimeout(r, 10));
    h.command("resync");
    await new Promise((r) => setTimeout(r, 10));
    h.command("end");
    await h.done;
    expect(server.opened).toEqual([1, 2]);
    expect(c.messages).toEqual(["a", "b"]);
    expect(c.statuses.at(-1)).toEqual({ phase: "ended", fatal: false });
  });

  it("awaits an asynchronous onMessage before reading on", async () => {
    const server = scripted([[{ msg: "a" }, { msg: "b" }, { msg: "end" }]]);
    const order: string[] = [];
    await runResilientStream(
      {
        connect: server.connect,
        onMessage: async (m): Promise<RunnerDirective> => {
          order.push(`start ${m}`);
          await new Promise((r) => setTimeout(r, 5));
          order.push(`done ${m}`);
          return m === "end" ? "end" : "continue";
        },
        onStatus: () => undefined,
      },
      new AbortController().signal,
    ).done;
    expect(order).toEqual(["start a", "done a", "start b", "done b", "start end", "done end"]);
  });
});

describe("backoffDelay", () => {
  it("doubles from 0.5 s to a 15 s cap", () => {
    const mid = () => 0.5; // no jitter
    expect([1, 2, 3, 4, 5, 6, 7, 12].map((n) => backoffDelay(n, mid))).toEqual([500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  });
  it("jitters by at most ±20 %", () => {
    expect(backoffDelay(1, () => 0)).toBe(400);
    expect(backoffDelay(1, () => 0.999999)).toBe(600);
  });
});

describe("describeStreamError", () => {
  it("names network failures plainly", () => {
    expect(describeStreamError(new TypeError("Failed to fetch"))).toBe("Network error: no connection to the console server");
    expect(describeStreamError(new ConnectError("Failed to fetch", Code.Unknown))).toBe(
      "Network error: no connection to the console server",
    );
    expect(describeStreamError(new ConnectError("no such session", Code.NotFound))).toBe("Not found");
    expect(describeStreamError(new ConnectError("You are not signed in", Code.Unauthenticated))).toBe("You are not signed in");
  });
});

describe("isFatalStreamError", () => {
  it("treats NotFound and auth errors as fatal, network errors as retryable", () => {
    expect(isFatalStreamError(new ConnectError("x", Code.NotFound))).toBe(true);
    expect(isFatalStreamError(new ConnectError("x", Code.PermissionDenied))).toBe(true);
    expect(isFatalStreamError(new ConnectError("x", Code.Unavailable))).toBe(false);
    expect(isFatalStreamError(new TypeError("Failed to fetch"))).toBe(false);
  });
});
