import { expect, test } from "./support/fixtures";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "./support/agent";
import { listRow, uniqueSuffix } from "./support/ui";

test("filters and sort live in the URL; back and forward walk through them; the keyboard drives the list", async ({ page }) => {
  const tag = uniqueSuffix();
  const alice = new Agent("agent://list/alice");
  const bob = new Agent("agent://list/bob");
  const dora = new Agent(`agent://list/dora-${tag}`);
  const handoff = newSessionId();
  const task = newSessionId();
  await alice.start(handoff, HANDOFF_MODE, `E2E list handoff ${tag}`, [alice.id, bob.id]);
  await alice.offer(handoff, "h1", bob.id, "pager", "rotation");
  await alice.start(task, TASK_MODE, `E2E list task ${tag}`, [alice.id, dora.id]);

  // Deep link straight into a filtered view.
  await page.goto(`/?q=${tag}&mode=task`);
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toHaveCount(0);
  await expect(page.getByTestId("filter-mode")).toHaveValue("task");
  await expect(page.getByTestId("filter-q")).toHaveValue(tag);

  // Changing a select pushes a history entry.
  await page.getByTestId("filter-mode").selectOption("handoff");
  await expect(page).toHaveURL(new RegExp(`\\?mode=handoff&q=${tag}$`));
  await expect(listRow(page, handoff)).toBeVisible();
  await expect(listRow(page, task)).toHaveCount(0);
  await page.getByTestId("filter-phase").selectOption("OfferPending");
  await expect(page).toHaveURL(/phase=OfferPending/);

  await page.goBack();
  await expect(page).not.toHaveURL(/phase=/);
  await expect(page.getByTestId("filter-phase")).toHaveValue("");
  await page.goBack();
  await expect(page).toHaveURL(/mode=task/);
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toHaveCount(0);
  await page.goForward();
  await expect(listRow(page, handoff)).toBeVisible();

  // Participant filter and free text (debounced, replaces the entry).
  await page.getByTestId("filter-mode").selectOption("");
  await page.getByTestId("filter-participant").fill(`dora-${tag}`);
  await expect(page).toHaveURL(new RegExp(`participant=agent%3A%2F%2Flist%2Fdora-${tag}|participant=dora-${tag}`));
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toHaveCount(0);
  await page.getByTestId("clear-filters").click();
  await expect(page).toHaveURL(/\/$/);

  // Invalid values in the URL are ignored, not trusted.
  await page.goto(`/?mode=evil&phase=__proto__&sort=nope&q=${tag}`);
  await expect(page.getByTestId("filter-mode")).toHaveValue("");
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toBeVisible();

  // Sort by intent ascending: handoff before task.
  await page.getByTestId("sort").selectOption("intent");
  await expect(page).toHaveURL(/sort=intent/);
  // Sorted on the server: wait for the new order rather than reading the rows at once.
  await expect
    .poll(() => page.locator("[data-row-id]").evaluateAll((els) => els.map((e) => e.getAttribute("data-row-id"))))
    .toEqual([handoff, task]);

  // Keyboard: j/k move the selection, Enter opens.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("j");
  await expect(listRow(page, handoff)).toBeFocused();
  await page.keyboard.press("j");
  await expect(listRow(page, task)).toBeFocused();
  await page.keyboard.press("k");
  await expect(listRow(page, handoff)).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(listRow(page, task)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/sessions/${task}$`));
  await expect(page.getByTestId("session-intent")).toHaveText(`E2E list task ${tag}`);
  await page.goBack();
  await expect(page).toHaveURL(/sort=intent/);

  // "/sessions" is an alias that keeps the filters.
  await page.goto(`/sessions?mode=task&q=${tag}`);
  await expect(page).toHaveURL(new RegExp(`/\\?mode=task&q=${tag}$`));
  await expect(listRow(page, task)).toBeVisible();
  await expect(page.getByRole("link", { name: "Sessions", exact: true })).toHaveAttribute("aria-current", "page");

  // "/" jumps to search.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("/");
  await expect(page.getByTestId("filter-q")).toBeFocused();
});
