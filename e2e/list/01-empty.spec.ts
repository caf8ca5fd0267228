import { expect, test } from "../support/fixtures";
import { expectNoAxeViolations, shoot } from "../support/ui";

// Runs first, against the fresh data directory: nothing has been started yet.
test("an empty runtime shows what to do", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("empty-state")).toContainText("No sessions yet — run npm run demo or start one from an agent");
  await expect(page.getByTestId("site-connection").locator("[data-connection]")).toHaveAttribute("data-connection", "live");
  await shoot(page, "list-empty-light");
  await expectNoAxeViolations(page, "empty list");
});
