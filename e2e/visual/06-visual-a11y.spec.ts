import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import {
  connectionSettled,
  expectNoAxeViolations,
  inEachScheme,
  modeSuffix,
  shoot,
  uniqueSuffix,
  viewportAt,
  watchErrors,
  WIDTHS,
  type Scheme,
} from "../support/ui";

const RUNBOOK = `# Orders DB on-call

## Open items
- **INC-5120**: replica lag alarms at night; see the dashboard
- Vacuum job moved to 03:00 UTC

| Alert | First response |
| --- | --- |
| ReplicaLag | Check the WAL sender |
| DiskHigh | Expand the volume |
`;

let handoffId = "";
let taskId = "";

test.beforeAll(async () => {
  const tag = uniqueSuffix();
  const alice = new Agent("agent://dba/alice");
  const bob = new Agent("agent://dba/bob");
  const carol = new Agent("agent://dba/carol");
  handoffId = newSessionId();
  await alice.start(handoffId, HANDOFF_MODE, `Orders DB on-call handoff ${tag}`, [alice.id, bob.id, carol.id]);
  await alice.offer(handoffId, "h1", bob.id, "orders-pg primary", "weekly rotation");
  await alice.context(handoffId, "h1", "text/markdown", RUNBOOK);
  await bob.declineHandoff(handoffId, "h1", "on leave this week");
  await alice.offer(handoffId, "h2", carol.id, "orders-pg primary", "bob is on leave");
  await alice.context(
    handoffId,
    "h2",
    "application/json",
    JSON.stringify({ dashboards: ["pg-overview", "replication"], pager: "orders-db" }),
  );
  await carol.acceptHandoff(handoffId, "h2", "taking it");
  await alice.commit(handoffId, HANDOFF_MODE, "handoff.accepted", true, "carol owns orders-pg");

  const planner = new Agent("agent://billing/planner");
  const worker = new Agent("agent://billing/worker-2");
  taskId = newSessionId();
  await planner.start(taskId, TASK_MODE, `Backfill March invoices ${tag}`, [planner.id, worker.id]);
  await planner.request(taskId, "backfill-03", "Backfill March invoices", worker.id, "Re-run invoices for March");
  await worker.acceptTask(taskId, "backfill-03");
  await worker.update(taskId, "backfill-03", 0.45, "12 of 27 days done");

  // A few more open sessions so the list has some texture.
  for (let i = 0; i < 4; i += 1) {
    const id = newSessionId();
    await alice.start(id, HANDOFF_MODE, `Payments on-call cover ${i + 1} ${tag}`, [alice.id, bob.id]);
    if (i % 2 === 0) await alice.offer(id, "h1", bob.id, "payments-api secondary", "cover");
  }
});

// Each page is loaded once per width and checked in both modes.
for (const width of WIDTHS) {
  test(`list and session pages render well in light and dark mode at ${width} px and pass axe`, async ({ page }) => {
    const errors = watchErrors(page);
    const suffix = (scheme: Scheme): string => modeSuffix(width, scheme);
    await page.setViewportSize(viewportAt(width));
    await page.emulateMedia({ reducedMotion: "reduce" });

    await page.goto("/");
    await expect(page.locator(`[data-row-id="${handoffId}"]`)).toBeVisible();
    await inEachScheme(page, async (scheme) => {
      await connectionSettled(page);
      await shoot(page, `list-${suffix(scheme)}`);
      await expectNoAxeViolations(page, `list (${suffix(scheme)})`);
    });

    await page.goto(`/sessions/${handoffId}`);
    await expect(page.getByTestId("commitment")).toBeVisible();
    await inEachScheme(page, async (scheme) => {
      await connectionSettled(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      await shoot(page, `session-handoff-${suffix(scheme)}`);
      await page.locator("#e-3").scrollIntoViewIfNeeded();
      await shoot(page, `session-handoff-timeline-${suffix(scheme)}`);
      await expectNoAxeViolations(page, `handoff session (${suffix(scheme)})`);
    });

    if (width === 1440) {
      await page.goto(`/sessions/${taskId}`);
      await expect(page.getByTestId("task-summary")).toContainText("45%");
      await inEachScheme(page, async (scheme) => {
        await connectionSettled(page);
        await shoot(page, `session-task-${suffix(scheme)}`);
        await expectNoAxeViolations(page, `task session (${suffix(scheme)})`);
      });
    }
    expect(errors).toEqual([]);
  });
}

test("the theme toggle overrides the system and persists without a flash", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/");
  const toggle = page.getByTestId("theme-toggle");
  await expect(toggle).toHaveAttribute("data-theme-pref", "system");
  await toggle.click(); // → light
  await toggle.click(); // → dark
  await expect(toggle).toHaveAttribute("data-theme-pref", "dark");
  await expect(page.locator("html")).toHaveClass(/dark/);
  // Reload: the class is on <html> before any script of ours runs.
  await page.goto("/", { waitUntil: "commit" });
  await page.waitForSelector("body");
  expect(await page.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(true);
  await toggle.click(); // → system (light)
  await expect(page.locator("html")).not.toHaveClass(/dark/);

  // The time zone toggle switches every timestamp to UTC and back.
  await page.goto(`/sessions/${handoffId}`);
  await page.getByTestId("tz-toggle").click();
  // (Relative times such as "47s ago" stay relative: check a clock time.)
  await expect(page.locator("time", { hasText: /\d{1,2}:\d{2}/ }).first()).toContainText("UTC");
});
