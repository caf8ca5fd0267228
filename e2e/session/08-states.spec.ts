import { expect, test } from "../support/fixtures";
import { newSessionId } from "../support/agent";
import { shoot } from "../support/ui";

test("when the console server is unreachable the list says what to do, then recovers", async ({ page }) => {
  // Both halves of the list: its pages (ListSessionPage) and its change stream (WatchSessionChanges).
  const LIST_RPCS = /\/baton\.v1\.ConsoleService\/(ListSessionPage|WatchSessionChanges)$/;
  await page.route(LIST_RPCS, (route) => route.abort("connectionrefused"));
  await page.goto("/");
  await expect(page.getByText("Can’t reach the console server")).toBeVisible();
  await expect(page.getByText("npm start", { exact: true })).toBeVisible();
  await expect(page.getByTestId("site-connection").locator("[data-connection]")).toHaveAttribute("data-connection", "reconnecting");
  await shoot(page, "list-unreachable-light");
  await page.unroute(LIST_RPCS);
  // The stream's own backoff may reconnect before the click lands; either way
  // the list must come back live. Click "Retry now" only while it is still shown.
  await page
    .getByRole("button", { name: "Retry now" })
    .click({ timeout: 3_000 })
    .catch(() => undefined);
  await expect(page.getByTestId("site-connection").locator("[data-connection]")).toHaveAttribute("data-connection", "live");
  await expect(page.getByText("Can’t reach the console server")).toHaveCount(0);
});

test("an unknown session id says so instead of spinning", async ({ page }) => {
  await page.goto(`/sessions/${newSessionId()}`);
  await expect(page.getByRole("heading", { name: "Session not found" })).toBeVisible();
  // Trying again cannot make it appear (issue 12): a way back instead.
  await expect(page.getByRole("button", { name: "Try again" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Back to sessions" })).toBeVisible();
  // The header's pill says "Ended", never the runtime's sentence.
  await expect(page.getByTestId("site-connection")).not.toContainText("Ended:");
});

test("an id no runtime could hold gets a plain not-a-session-id page, not a runtime error", async ({ page }) => {
  await page.goto("/sessions/abc");
  await expect(page.getByRole("heading", { name: "Not a session id" })).toBeVisible();
  await expect(page.getByTestId("site-connection")).not.toContainText(/Ended|session_id/);
  await expect(page.getByText("No live stream")).toHaveCount(0);
});
