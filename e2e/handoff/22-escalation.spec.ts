// Escalation (issue #12, item 8): alice hands off to bob from the "Hand
// off…" dialog with a chain [tell carol, then re-offer to dave] and short
// timeouts (one chain minute is 1 s here: BATON_ESCALATION_MINUTE_MS in
// playwright.config.ts). Nobody answers: the chain fires, the unanswered
// session is closed by Baton for alice and dave finds the offer, with the
// runbook, in his inbox; the timeline marks what Baton sent for alice. In a
// second handoff bob accepts first and nothing fires; in a third alice
// cancels the chain from the session page. Every session started here is
// cancelled at the end (other specs count inboxes exactly). The dialog with
// the chain and the session page's escalation panel are shot at 1440 and
// 390 px, light and dark; axe passes on both.
import type { Page } from "@playwright/test";
import { expect, test } from "../support/fixtures";
import { actionButton, connectJson, csrfTokenOf, sessionIdOf, signedInAs } from "../support/session-ui";
import { expectNoAxeViolations, shoot, uniqueSuffix, watchErrors } from "../support/ui";

const PHONE = { width: 390, height: 844 };
// Each case waits for chain steps on top of several page loads; a loaded 2-core machine needs room.
test.describe.configure({ timeout: 240_000 });
const RUNBOOK = "# Search on-call\n\n1. Check the indexer lag.\n";

async function fillDialog(page: Page, scope: string, notifyMinutes: string, reofferMinutes: string): Promise<void> {
  const d = page.getByTestId("hand-off-dialog");
  await d.getByLabel("To", { exact: true }).selectOption("human:bob");
  await d.getByLabel("What you hand over").fill(scope);
  await d.locator("#ho-reason").fill("end of my rotation");
  await d.getByLabel("Runbook (Markdown, optional)").fill(RUNBOOK);
  await d.getByTestId("hand-off-policy-approval").check();
  await d.getByTestId("hand-off-approver-carol").check();
  await d.getByTestId("hand-off-escalate").check();
  // Lead approval: the approver is whom to tell by default.
  await expect(d.getByTestId("hand-off-escalate-notify-carol")).toBeChecked();
  await d.getByTestId("hand-off-escalate-notify-minutes").fill(notifyMinutes);
  await d.getByTestId("hand-off-escalate-reoffer").selectOption("human:dave");
  await d.getByTestId("hand-off-escalate-reoffer-minutes").fill(reofferMinutes);
}

/** Cancel a session as alice (nothing may be left waiting on anyone). */
async function cancelAsAlice(page: Page, sessionId: string): Promise<void> {
  const token = await csrfTokenOf(page.request);
  const res = await connectJson(
    page.request,
    "Cancel",
    { sessionId, messageId: crypto.randomUUID(), reason: "e2e cleanup" },
    { "x-baton-csrf": token },
  );
  expect(res.status()).toBe(200);
}

test("an unanswered offer escalates: carol is told, then dave gets the handoff with the runbook, marked as done by Baton for alice", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const scope = `search-api on-call ${tag}`;
  const alice = await signedInAs(browser, "alice");
  const a = alice.page;
  const errors = watchErrors(a);
  await a.goto("/handoff");
  const dialog = a.getByTestId("hand-off-dialog");
  await expect(dialog).toBeVisible();
  await fillDialog(a, scope, "4", "2");

  // A bad number is said next to its field, by the contract.
  await dialog.getByTestId("hand-off-escalate-reoffer-minutes").fill("1.5");
  await dialog.getByTestId("hand-off-submit").click();
  await expect(dialog.getByText("Use whole minutes from 1 to 1440.")).toBeVisible();
  await dialog.getByTestId("hand-off-escalate-reoffer-minutes").fill("2");

  await dialog.getByTestId("hand-off-escalation").scrollIntoViewIfNeeded();
  for (const scheme of ["light", "dark"] as const) {
    await a.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await shoot(a, `escalation-dialog-1440-${scheme}`);
  }
  await a.emulateMedia({ colorScheme: "light" });
  await expectNoAxeViolations(a, "hand-off dialog with an escalation (1440)");

  await dialog.getByTestId("hand-off-submit").click();
  await a.waitForURL(/\/sessions\/[^/?]+$/);
  const first = sessionIdOf(a);
  const panel = a.getByTestId("escalation-panel");
  await expect(panel).toHaveAttribute("data-state", "pending");
  await expect(panel.getByTestId("escalation-step")).toHaveCount(2);
  await expect(panel.getByTestId("escalation-step").first()).toContainText("Tell Carol Lee");
  await expect(panel.getByTestId("escalation-cancel")).toBeVisible();
  await shoot(a, "escalation-session-1440-light");
  await expectNoAxeViolations(a, "session page with an escalation (1440)");

  // Nobody answers: carol is told after 4 "minutes", the handoff goes to dave 2 later.
  await expect(panel).toHaveAttribute("data-state", "done", { timeout: 30_000 });
  await expect(panel.getByTestId("escalation-step").first()).toHaveAttribute("data-state", "done");
  await expect(panel.getByTestId("escalation-step").nth(1)).toContainText("Done by Baton for Alice Ng");
  // The unanswered session was closed by Baton for alice; the timeline says so.
  await expect(a.getByTestId("session-badges")).toContainText("Cancelled");
  await expect(panel.getByTestId("escalation-step").nth(1)).toContainText("it closed this session, unanswered");
  const href = await panel.getByTestId("escalation-next-session").getAttribute("href");
  const second = decodeURIComponent((href ?? "").replace(/^\/sessions\//, ""));
  expect(second).not.toBe(first);
  await panel.getByTestId("escalation-next-session").click();
  await a.waitForURL(`**/sessions/${second}`);
  // The re-offer's three messages, each marked as sent by Baton for alice.
  await expect(a.locator('[data-type="HandoffOffer"]').getByTestId("escalation-mark")).toHaveCount(1);
  await expect(a.locator('[data-type="HandoffContext"]').getByTestId("escalation-mark")).toHaveCount(1);
  await expect(a.locator('[data-type="SessionStart"]').getByTestId("escalation-mark")).toHaveCount(1);
  await expect(a.getByTestId("waiting-on")).toContainText("Dave Park");
  for (const scheme of ["light", "dark"] as const) {
    await a.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await shoot(a, `escalation-done-1440-${scheme}`);
  }
  await a.emulateMedia({ colorScheme: "light" });
  expect(errors).toEqual([]);

  // Carol was told while it waited on Bob; the re-offer closed that session, so nothing waits on her now.
  const carol = await signedInAs(browser, "carol");
  await carol.page.goto("/inbox");
  await expect(carol.page.getByTestId("inbox-count")).toBeVisible();
  await expect(carol.page.locator(`[data-testid="inbox-item"][data-session="${first}"]`)).toHaveCount(0);
  await carol.context.close();

  // Dave: the offer is in his inbox and his brief carries the runbook.
  const dave = await signedInAs(browser, "dave", { viewport: PHONE });
  const d = dave.page;
  await d.goto("/inbox");
  await expect(d.locator(`[data-testid="inbox-item"][data-session="${second}"]`)).toBeVisible();
  await d.goto(`/sessions/${second}`);
  await expect(d.getByTestId("brief")).toHaveAttribute("data-kind", "offer");
  await expect(d.getByTestId("brief-runbook").locator("h1")).toHaveText("Search on-call");
  await expect(actionButton(d, "accept")).toBeVisible();
  for (const scheme of ["light", "dark"] as const) {
    await d.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await d.getByTestId("escalation-panel").scrollIntoViewIfNeeded();
    await shoot(d, `escalation-session-390-${scheme}`);
  }
  await d.emulateMedia({ colorScheme: "light" });
  await expectNoAxeViolations(d, "session page with an escalation (390)");
  await dave.context.close();

  await cancelAsAlice(a, second);
  await alice.context.close();
});

test("a chain can be cancelled from the session page; when bob accepts first, nothing fires", async ({ browser }) => {
  const tag = uniqueSuffix();
  const alice = await signedInAs(browser, "alice");
  const a = alice.page;

  // Alice cancels a chain herself.
  await a.goto("/handoff");
  await fillDialog(a, `ledger on-call ${tag}`, "15", "20");
  await a.getByTestId("hand-off-dialog").getByTestId("hand-off-submit").click();
  await a.waitForURL(/\/sessions\/[^/?]+$/);
  const cancelled = sessionIdOf(a);
  await a.getByTestId("escalation-cancel").click();
  await expect(a.getByTestId("escalation-panel")).toHaveAttribute("data-state", "cancelled");
  await expect(a.getByTestId("escalation-detail")).toHaveText("Cancelled by Alice Ng (human:alice).");
  await shoot(a, "escalation-cancelled-1440-light");

  // Bob accepts another one at once (through the API, so the machine's load cannot make him late).
  await a.goto("/handoff");
  await fillDialog(a, `billing on-call ${tag}`, "15", "20");
  await a.getByTestId("hand-off-dialog").getByTestId("hand-off-submit").click();
  await a.waitForURL(/\/sessions\/[^/?]+$/);
  const accepted = sessionIdOf(a);
  const started = Date.now();
  const bob = await signedInAs(browser, "bob");
  const token = await csrfTokenOf(bob.page.request);
  const res = await connectJson(
    bob.page.request,
    "Accept",
    { sessionId: accepted, messageId: crypto.randomUUID(), reason: "on it" },
    { "x-baton-csrf": token },
  );
  expect(res.status()).toBe(200);
  await bob.context.close();
  const panel = a.getByTestId("escalation-panel");
  await expect(panel).toHaveAttribute("data-state", "stopped");
  await expect(panel.getByTestId("escalation-detail")).toHaveText("Bob Ito accepted the offer.");

  // Past the first step's time (15 s after the offer): nothing was done in either.
  await a.waitForTimeout(Math.max(0, 16_000 - (Date.now() - started)));
  await a.reload();
  await expect(a.getByTestId("escalation-panel")).toHaveAttribute("data-state", "stopped");
  await expect(a.getByTestId("escalation-step").first()).toHaveAttribute("data-state", "skipped");
  await expect(a.getByTestId("escalation-mark")).toHaveCount(0);
  await expect(a.getByTestId("session-badges")).not.toContainText("Cancelled");
  await a.goto(`/sessions/${cancelled}`);
  await expect(a.getByTestId("escalation-panel")).toHaveAttribute("data-state", "cancelled");
  await expect(a.getByTestId("escalation-step").first()).toHaveAttribute("data-state", "skipped");
  await expect(a.getByTestId("waiting-on")).toContainText("Bob Ito");

  await cancelAsAlice(a, accepted);
  await cancelAsAlice(a, cancelled);
  await alice.context.close();
});
