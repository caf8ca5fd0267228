import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectEnvelope, hasEarly, sendEarly, takeEarly, UNCLAIMED_MS } from "@/lib/client/early-call";

const URL_A = "http://console.test/svc/Method";
const body = (...bytes: number[]) => connectEnvelope(new Uint8Array(bytes));

/** A fetch stand-in that records each call's signal and answers with `response`. */
function fakeFetch(response: Response) {
  const signals: AbortSignal[] = [];
  const impl = ((_input: RequestInfo | URL, init?: RequestInit) => {
    if (init?.signal) signals.push(init.signal);
    return Promise.resolve(response);
  }) as typeof fetch;
  return { impl, signals };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  // Whatever a test left waiting is cancelled.
  vi.runAllTimers();
  vi.useRealTimers();
});

describe("connectEnvelope", () => {
  it("prefixes flags 0 and the big-endian length", () => {
    expect([...connectEnvelope(new Uint8Array([7, 8, 9]))]).toEqual([0, 0, 0, 0, 3, 7, 8, 9]);
    expect([...connectEnvelope(new Uint8Array(300)).subarray(0, 5)]).toEqual([0, 0, 0, 1, 44]);
  });
});

describe("sendEarly / takeEarly", () => {
  it("hands the response to the request with the same URL and bytes, once, and passes its cancel on", async () => {
    const response = new Response("x");
    const f = fakeFetch(response);
    sendEarly(URL_A, body(1, 2), f.impl);
    const caller = new AbortController();
    const taken = takeEarly(URL_A, body(1, 2), caller.signal);
    expect(await taken).toBe(response);
    expect(takeEarly(URL_A, body(1, 2), undefined)).toBeUndefined();
    expect(f.signals[0]?.aborted).toBe(false);
    caller.abort();
    expect(f.signals[0]?.aborted).toBe(true);
  });

  it("is not taken by other bytes, which cancel it", () => {
    const f = fakeFetch(new Response("x"));
    sendEarly(URL_A, body(1, 2), f.impl);
    expect(takeEarly(URL_A, body(1, 3), undefined)).toBeUndefined();
    expect(f.signals[0]?.aborted).toBe(true);
    expect(hasEarly(URL_A)).toBe(false);
  });

  it("is not taken by a body that is not bytes, nor by a request already cancelled", () => {
    const f = fakeFetch(new Response("x"));
    sendEarly(URL_A, body(1), f.impl);
    expect(takeEarly(URL_A, "text", undefined)).toBeUndefined();
    expect(f.signals[0]?.aborted).toBe(true);
    sendEarly(URL_A, body(1), f.impl);
    expect(takeEarly(URL_A, body(1), AbortSignal.abort())).toBeUndefined();
    expect(f.signals[1]?.aborted).toBe(true);
  });

  it("leaves requests to other URLs alone", () => {
    const f = fakeFetch(new Response("x"));
    sendEarly(URL_A, body(1), f.impl);
    expect(takeEarly("http://console.test/svc/Other", body(1), undefined)).toBeUndefined();
    expect(hasEarly(URL_A)).toBe(true);
    expect(f.signals[0]?.aborted).toBe(false);
  });

  it("cancels a call nobody took, and one replaced by a newer call to the same URL", () => {
    const f = fakeFetch(new Response("x"));
    sendEarly(URL_A, body(1), f.impl);
    sendEarly(URL_A, body(2), f.impl);
    expect(f.signals[0]?.aborted).toBe(true);
    vi.advanceTimersByTime(UNCLAIMED_MS - 1);
    expect(hasEarly(URL_A)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(hasEarly(URL_A)).toBe(false);
    expect(f.signals[1]?.aborted).toBe(true);
  });

  it("keeps a failed call's rejection for whoever takes it", async () => {
    const impl = (() => Promise.reject(new TypeError("network down"))) as typeof fetch;
    sendEarly(URL_A, body(1), impl);
    await Promise.resolve();
    await expect(takeEarly(URL_A, body(1), undefined)).rejects.toThrow("network down");
  });
});
