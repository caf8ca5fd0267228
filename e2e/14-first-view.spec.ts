// The session page's server-rendered first view: readable with JavaScript
// off (header, phase, timeline rows, rendered runbook), then replaced by the
// live view after `load` without a reload, a hydration error or a lost event.
import { expect, test } from "./support/fixtures";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "./support/agent";
import { authFile } from "./support/people";
import { shoot, uniqueSuffix, watchErrors } from "./support/ui";

const RUNBOOK = `## Before you accept

- Check the **pager** app
- Confirm dashboard access

| signal | threshold |
| --- | --- |
| 5xx rate | 0.5% |
`;

async function seed() {
  const alice = new Agent("agent://first-view/alice");
  const bob = new Agent("agent://first-view/bob");
  const sid = newSessionId();
  const intent = `First view ${uniqueSuffix()}`;
  await alice.start(sid, HANDOFF_MODE, intent, [alice.id, bob.id]);
  await alice.offer(sid, "h1", bob.id, "payments primary on-call", "shift change");
  await alice.context(sid, "h1", "text/markdown", RUNBOOK);
  await alice.context(sid, "h1", "text/markdown", `<script>window.__pwned = "script"</script>\n\n<img src=x onerror="window.__pwned='img'">`);
  await bob.acceptHandoff(sid, "h1", "taking it");
  return { sid, intent, alice, bob };
}

test("with JavaScript off the session page still shows the header, phase and timeline", async ({ browser }) => {
  const { sid, intent } = await seed();
  const context = await browser.newContext({ javaScriptEnabled: false, storageState: authFile("wendy") });
  const page = await context.newPage();
  await page.goto(`/sessions/${sid}`);
  await expect(page.getByTestId("session-intent")).toHaveText(intent);
  await expect(page.getByTestId("session-badges")).toHaveAttribute("data-phase", "Accepted");
  const rows = page.locator("[data-testid=timeline-preview] article[data-sequence]");
  await expect(rows).toHaveCount(5);
  const runbook = rows.filter({ has: page.locator("[data-content=markdown] h2") }).first();
  await expect(runbook.locator("h2")).toHaveText("Before you accept");
  await expect(runbook.locator("li")).toHaveCount(2);
  await expect(runbook.locator("table td").first()).toHaveText("5xx rate");
  // The hostile context is shown as text: no element was made from it.
  const hostile = rows.filter({ hasText: "window.__pwned" });
  await expect(hostile).toHaveCount(1);
  await expect(hostile.locator("script, img")).toHaveCount(0);
  await shoot(page, "session-first-view-no-js");
  await context.close();
});

test("the live view takes over from the first view without a reload or a lost event", async ({ page }) => {
  const errors = watchErrors(page);
  const { sid, intent, alice } = await seed();
  // Hold the live stream's first request until the first view has been seen.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route("**/baton.v1.ConsoleService/SubscribeSession", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`/sessions/${sid}`);
  await expect(page.getByTestId("timeline-preview")).toBeVisible();
  await expect(page.getByTestId("session-intent")).toHaveText(intent);
  await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
  // An event that happens between the server render and the live stream.
  await alice.context(sid, "h1", "text/plain", "late note after the first view");
  release();
  await expect(page.getByTestId("timeline")).toBeVisible();
  await expect(page.getByTestId("timeline-preview")).toHaveCount(0);
  await expect(page.locator("[data-testid=timeline] article[data-sequence]")).toHaveCount(6);
  await expect(page.getByText("late note after the first view")).toBeVisible();
  await expect(page.getByTestId("session-intent")).toHaveText(intent);
  // Same document all along: no reload happened.
  expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  expect(errors).toEqual([]);
});
