// The session page's server-rendered first view: readable with JavaScript
// off (header, phase, timeline rows, rendered runbook), then replaced by the
// live view after `load` without a reload, a hydration error or a lost event.
import { fromBinary } from "@bufbuild/protobuf";
import type { Page, Request } from "@playwright/test";
import { SubscribeSessionRequestSchema } from "@/lib/gen/baton/v1/console_pb";
import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { authFile } from "../support/people";
import { shoot, uniqueSuffix, watchErrors } from "../support/ui";

const RUNBOOK = `## Before you accept

- Check the **pager** app
- Confirm dashboard access

| signal | threshold |
| --- | --- |
| 5xx rate | 0.5% |
`;

/** after_sequence of a SubscribeSession request (Connect's enveloped binary body). */
function afterSequenceOf(request: Request): bigint | undefined {
  const raw = request.postDataBuffer();
  return raw && raw.length >= 5 ? fromBinary(SubscribeSessionRequestSchema, raw.subarray(5)).afterSequence : undefined;
}

/**
 * Wait until the server renders the session's first view. The first render
 * after a session was written folds its history once; on a busy machine that
 * may outlast the page's budget (BATON_PREVIEW_TIMEOUT_MS), and the page then
 * comes without a first view while the fold finishes in the background.
 */
async function firstViewReady(page: Page, sid: string) {
  await expect
    .poll(async () => (await page.request.get(`/sessions/${sid}`)).text().then((html) => html.includes('data-testid="session-preview"')), {
      timeout: 30_000,
    })
    .toBe(true);
}

async function seed() {
  const alice = new Agent("agent://first-view/alice");
  const bob = new Agent("agent://first-view/bob");
  const sid = newSessionId();
  const intent = `First view ${uniqueSuffix()}`;
  await alice.start(sid, HANDOFF_MODE, intent, [alice.id, bob.id]);
  await alice.offer(sid, "h1", bob.id, "payments primary on-call", "shift change");
  await alice.context(sid, "h1", "text/markdown", RUNBOOK);
  await alice.context(
    sid,
    "h1",
    "text/markdown",
    `<script>window.__pwned = "script"</script>\n\n<img src=x onerror="window.__pwned='img'">`,
  );
  await bob.acceptHandoff(sid, "h1", "taking it");
  return { sid, intent, alice, bob };
}

test("with JavaScript off the session page still shows the header, phase and timeline", async ({ browser }) => {
  const { sid, intent } = await seed();
  const context = await browser.newContext({ javaScriptEnabled: false, storageState: authFile("wendy") });
  const page = await context.newPage();
  await firstViewReady(page, sid);
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
  const asked: (bigint | undefined)[] = [];
  await page.route("**/baton.v1.ConsoleService/SubscribeSession", async (route) => {
    asked.push(afterSequenceOf(route.request()));
    await held;
    await route.continue();
  });
  await firstViewReady(page, sid);
  const response = await page.goto(`/sessions/${sid}`);
  // The page came with the server's first view. Read from the response, not the DOM: the live view
  // may already have taken its place by the time the page is looked at.
  expect(await response?.text()).toContain('data-testid="timeline-preview"');
  await expect(page.getByTestId("session-intent")).toHaveText(intent);
  await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
  // One fold: the live view is in place from the first view's state while its
  // stream is still held, and that stream resumes after the first view's last
  // event instead of replaying the history.
  await expect(page.getByTestId("timeline")).toBeVisible();
  await expect(page.locator("[data-testid=timeline] article[data-sequence]")).toHaveCount(5);
  await expect.poll(() => asked[0]).toBe(5n);
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
  // One request: the one the page sent before hydrating (lib/client/early-fetch.ts) was taken over by the live view's stream.
  expect(asked).toEqual([5n]);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  expect(errors).toEqual([]);
});

test("a long session's live view starts from the first view's window and reads the earlier events on demand", async ({ page }) => {
  const errors = watchErrors(page);
  const alice = new Agent("agent://first-view/alice");
  const bob = new Agent("agent://first-view/bob");
  const sid = newSessionId();
  await alice.start(sid, HANDOFF_MODE, `Long first view ${uniqueSuffix()}`, [alice.id, bob.id]);
  await alice.offer(sid, "h1", bob.id, "payments primary on-call", "shift change");
  for (let i = 3; i <= 150; i++) await alice.context(sid, "h1", "text/plain", `note ${i}`);
  const asked: (bigint | undefined)[] = [];
  page.on("request", (r) => {
    if (r.url().endsWith("/baton.v1.ConsoleService/SubscribeSession")) asked.push(afterSequenceOf(r));
  });
  await firstViewReady(page, sid);
  await page.goto(`/sessions/${sid}`);
  await expect(page.getByTestId("timeline")).toBeVisible();
  await expect(page.getByTestId("earlier-events")).toContainText("Showing the latest 50 of 150 events");
  await expect(page.getByText("150 events", { exact: true })).toBeVisible();
  expect(asked[0]).toBe(150n);
  // The offer's context count is the whole history's, not the window's.
  await expect(page.getByText("148 contexts")).toBeVisible();
  // A live event joins the window once.
  await alice.context(sid, "h1", "text/plain", "live note 151");
  await expect(page.getByText("151 events", { exact: true })).toBeVisible();
  await expect(page.getByTestId("earlier-events")).toContainText("Showing the latest 51 of 151 events");
  // The earlier events, on demand: read once from the start, nothing doubled.
  await page.getByRole("button", { name: "Load the 100 earlier events" }).click();
  await expect(page.getByTestId("earlier-events")).toHaveCount(0);
  expect(asked).toContain(0n);
  await expect(page.getByText("151 events", { exact: true })).toBeVisible();
  await expect(page.getByText("149 contexts")).toBeVisible();
  await expect(page.locator("#e-1")).toContainText("started the session");
  await expect(page.locator("#e-3")).toContainText("note 3");
  await page.locator("body").click({ position: { x: 5, y: 200 } });
  await page.keyboard.press("End");
  await expect(page.locator("#e-151")).toBeFocused();
  await expect(page.locator("#e-151")).toContainText("live note 151");
  expect(errors).toEqual([]);
});
