// Keyboard use (issue 12): Enter expands a timeline event, "?" lists the
// shortcuts, "/" reaches the search box from anywhere (a focused row
// included), Esc leaves a text field, and the hints are hidden on touch screens.
import fs from "node:fs";
import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { authFile } from "../support/people";
import { listLive, uniqueSuffix, watchErrors } from "../support/ui";

async function seed(): Promise<{ sid: string; intent: string }> {
  const alice = new Agent("agent://keys/alice");
  const bob = new Agent("agent://keys/bob");
  const sid = newSessionId();
  const intent = `Keyboard ${uniqueSuffix()}`;
  await alice.start(sid, HANDOFF_MODE, intent, [alice.id, bob.id]);
  await alice.offer(sid, "h1", bob.id, "orders-pg", "rotation");
  await bob.acceptHandoff(sid, "h1", "ok");
  return { sid, intent };
}

test("Enter expands an event, ? lists the shortcuts, / searches from a focused row, Esc leaves the search box", async ({ page }) => {
  const errors = watchErrors(page);
  const { sid } = await seed();
  await page.goto(`/sessions/${sid}`);
  await expect(page.locator("#e-3")).toBeVisible();
  await expect(page.getByTestId("keyboard-hint")).toBeVisible();
  // Agents by their shortened id, the full id on hover, with a copy button (issue 12, item 2).
  const facts = page.getByTestId("session-facts");
  await expect(facts.locator('[title="agent://keys/alice"]')).toHaveText("keys/alice");
  await expect(facts.getByRole("button", { name: "Copy the id agent://keys/alice" })).toBeVisible();

  // The newest event, then Enter: its raw envelope opens; Enter again folds it.
  await page.locator("body").click({ position: { x: 5, y: 300 } });
  await page.keyboard.press("End");
  const row = page.locator("#e-3");
  await expect(row).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(row.locator("details").first()).toHaveAttribute("open", "");
  await expect(row.getByText("message_type")).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(row.locator("details").first()).not.toHaveAttribute("open", "");

  // "?" lists the shortcuts; Esc closes the list.
  await page.keyboard.press("?");
  const help = page.getByTestId("shortcuts-dialog");
  await expect(help).toBeVisible();
  await expect(help).toContainText("Search sessions");
  await expect(help).toContainText("expand the focused timeline event");
  await page.keyboard.press("Escape");
  await expect(help).toBeHidden();

  // "/" from the focused row: to the session list, search focused.
  await row.focus();
  await page.keyboard.press("/");
  await expect(page).toHaveURL(/\/$/);
  const search = page.getByTestId("filter-q");
  await expect(search).toBeFocused();
  // Esc leaves the search box.
  await page.keyboard.press("Escape");
  await expect(search).not.toBeFocused();

  // From a focused list row, "/" goes back to the search box. The list's keys belong to its live
  // screen, which comes after the server's first view (in place at once on an idle machine).
  await listLive(page);
  await page.keyboard.press("j");
  await expect(page.locator("[data-row-id]").first()).toBeFocused();
  await page.keyboard.press("/");
  await expect(search).toBeFocused();
  expect(errors).toEqual([]);
});

test("the handover report downloads as readable Markdown", async ({ page }) => {
  const { sid, intent } = await seed();
  await page.goto(`/sessions/${sid}`);
  await expect(page.getByTestId("export-markdown")).toBeEnabled();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("export-markdown").click()]);
  expect(download.suggestedFilename()).toBe(`handover-${sid}.md`);
  const md = fs.readFileSync(await download.path(), "utf8");
  expect(md).toContain(`# Handover report: ${intent}`);
  expect(md).toContain("## Offer 1: keys/alice → keys/bob (accepted)");
  expect(md).toContain("- Reason: “rotation”");
  expect(md).toContain("by keys/bob (agent, `agent://keys/bob`): “ok”");
  expect(md).toContain("| 2 |");
});

test("keyboard hints are hidden on touch screens", async ({ browser }) => {
  const { sid } = await seed();
  const context = await browser.newContext({
    storageState: authFile("wendy"),
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  });
  const page = await context.newPage();
  await page.goto(`/sessions/${sid}`);
  await expect(page.locator("#e-3")).toBeVisible();
  await expect(page.getByTestId("keyboard-hint")).toBeHidden();
  await context.close();
});
