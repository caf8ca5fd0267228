import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { authFile } from "../support/people";
import { currentApp } from "../support/apps";
import { TcpProxy } from "../support/tcp-proxy";
import { expectRowPhase, expectSessionPhase, timelineEventTypes, timelineSequences, uniqueSuffix } from "../support/ui";

// The browser talks to the console through a TCP proxy the test controls, so
// the live streams can be cut for real (an offline flag alone leaves an open
// stream running) and kept down while the agents carry on.
test("cutting the stream connections loses no event and duplicates none", async ({ browser }) => {
  const proxy = new TcpProxy("127.0.0.1", currentApp().consolePort);
  const port = await proxy.start();
  const context = await browser.newContext({ baseURL: `http://127.0.0.1:${port}`, storageState: authFile("wendy") });
  const page = await context.newPage();
  const list = await context.newPage();
  try {
    const alice = new Agent("agent://oncall/alice");
    const bob = new Agent("agent://oncall/bob");
    const carol = new Agent("agent://oncall/carol");
    const sid = newSessionId();
    await alice.start(sid, HANDOFF_MODE, `E2E resilience ${uniqueSuffix()}`, [alice.id, bob.id, carol.id]);
    await alice.offer(sid, "h1", bob.id, "pager", "shift change");

    await list.goto("/");
    await expectRowPhase(list, sid, "OfferPending", "Offered");
    await page.goto(`/sessions/${sid}`);
    await expect(page.locator("#e-2")).toBeVisible();
    const indicator = page.locator("main [data-connection]").first();
    await expect(indicator).toHaveAttribute("data-connection", "live");

    // Cut every connection and keep the network down (also offline, to exercise the `online` retry).
    proxy.sever();
    await context.setOffline(true);
    await expect(indicator).toHaveAttribute("data-connection", "reconnecting");
    await expect(list.getByTestId("site-connection").locator("[data-connection]")).toHaveAttribute("data-connection", "reconnecting");

    // Meanwhile the session moves on.
    await alice.context(sid, "h1", "text/markdown", "# Missed while offline");
    await bob.declineHandoff(sid, "h1", "busy");
    await alice.offer(sid, "h2", carol.id, "pager", "bob is busy");

    proxy.restore();
    await context.setOffline(false);
    await expect(indicator).toHaveAttribute("data-connection", "live", { timeout: 30_000 });
    await expectSessionPhase(page, "OfferPending", "Offered");
    await expect(page.locator("#e-5")).toBeVisible();
    expect(await timelineSequences(page)).toEqual([1, 2, 3, 4, 5]);
    await expectRowPhase(list, sid, "OfferPending", "Offered");

    // Cut again mid-flow, this time only briefly; live events keep folding in order.
    proxy.sever();
    await carol.acceptHandoff(sid, "h2", "taking it");
    proxy.restore();
    await expect(indicator).toHaveAttribute("data-connection", "live", { timeout: 30_000 });
    await alice.commit(sid, HANDOFF_MODE, "handoff.accepted", true, "carol has the pager");
    await expectSessionPhase(page, "Committed", "Committed");
    await expectRowPhase(list, sid, "Committed", "Committed");
    const seqs = await timelineSequences(page);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(await timelineEventTypes(page)).toEqual([
      "SessionStart",
      "HandoffOffer",
      "HandoffContext",
      "HandoffDecline",
      "HandoffOffer",
      "HandoffAccept",
      "Commitment",
    ]);
  } finally {
    await context.close();
    await proxy.stop();
  }
});
