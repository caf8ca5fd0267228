// History at scale (see __fixtures__/runtime-scale-kit.ts): history is replayed from storage page
// by page with no gap before live delivery.
import { afterEach, describe, expect, it } from "vitest";
import { HISTORY_PAGE_RECORDS } from "@/lib/runtime/kernel";
import { agent, clientFor, FrameQueue, newSessionId, tempDir, waitFor } from "./harness";
import { cleanUp, dirs, start } from "./__fixtures__/runtime-scale-kit";

afterEach(cleanUp);

describe("history replay", () => {
  it("reads history in pages as the subscriber reads, then joins live delivery with no gap and no duplicate", async () => {
    const dataDir = tempDir("baton-replay-");
    dirs.push(dataDir);
    const rt = await start({ MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir });
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    await o.start(["o", "t"], { messageId: "m0" });
    await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { messageId: "m1" });
    const sent = ["m0", "m1"];
    const ctx = (i: number) =>
      o.send(
        "HandoffContext",
        { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode(`c${i}`) },
        { messageId: `m${i}` },
      );
    const historyLength = 3 * HISTORY_PAGE_RECORDS;
    for (let i = 2; i < historyLength; i += 50) {
      const ids = Array.from({ length: Math.min(50, historyLength - i) }, (_, k) => i + k);
      await Promise.all(ids.map((n) => ctx(n)));
      sent.push(...ids.map((n) => `m${n}`));
    }
    const pagesBefore = rt.kernel.stats().historyPages;
    const got: string[] = [];
    const frames = new FrameQueue();
    frames.push({ subscribeSessionId: sid });
    const ac = new AbortController();
    const duringReplay = 100;
    const afterAttach = 20;
    const total = historyLength + duringReplay + afterAttach;
    let live = 0;
    const reader = (async () => {
      for await (const r of clientFor(rt, "t").streamSession(frames, { signal: ac.signal })) {
        if (r.response.case !== "envelope") continue;
        got.push(r.response.value.messageId);
        // A slow reader: while it reads the history, the session keeps going.
        if (got.length % 3 === 0 && live < duringReplay) {
          const n = historyLength + live++;
          sent.push(`m${n}`);
          await ctx(n);
        }
        if (got.length === total) break;
      }
    })();
    // Caught up: the subscription is now live. The next envelopes come from the live path.
    await waitFor(() => live === duringReplay && got.length === historyLength + duringReplay, 20_000, "replay caught up");
    await waitFor(() => rt.kernel.stats().sessionSubscribers === 1, 5_000, "live listener attached");
    for (let k = 0; k < afterAttach; k++) {
      const n = historyLength + duringReplay + k;
      sent.push(`m${n}`);
      await ctx(n);
    }
    await waitFor(() => got.length === total, 20_000, "all envelopes");
    ac.abort();
    await reader.catch(() => undefined);
    expect(got).toEqual(sent);
    expect(new Set(got).size).toBe(total);
    // The history was read from storage in several pages, not in one load.
    expect(rt.kernel.stats().historyPages - pagesBefore).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
