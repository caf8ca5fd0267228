import { expect, test } from "./support/fixtures";
import { expectSessionPhase, watchErrors } from "./support/ui";
import { signedInAs } from "./support/session-ui";

test("an admin runs a demo scenario from the console; it plays server-side and its session is live in the console", async ({ browser }) => {
  const ruth = await signedInAs(browser, "ruth");
  const alice = await signedInAs(browser, "alice");
  try {
    const r = ruth.page;
    const errors = watchErrors(r);
    await r.goto("/");
    await r.getByTestId("user-menu").click();
    await r.getByTestId("menu-run-demo").click();
    await expect(r).toHaveURL(/\/admin$/);
    await r.getByLabel("Scenario").selectOption("lead-approval");
    await r.getByLabel("Pace").selectOption("instant");
    await r.getByTestId("run-demo").click();
    const run = r.getByTestId("demo-run");
    await expect(run.getByRole("heading")).toHaveText("Played as scripted", { timeout: 30_000 });
    await expect(run.getByRole("log")).toContainText("FORBIDDEN");
    await run.getByTestId("demo-session-link").click();
    await expect(r).toHaveURL(/\/sessions\//);
    await expectSessionPhase(r, "Committed", "Committed");
    // The demo's actors are agents and a human id: the timeline says which.
    await expect(r.locator('[data-type="SessionStart"] [data-actor-kind]')).toHaveAttribute("data-actor-kind", "agent");
    await expect(r.locator('[data-type="Commitment"] [data-actor-kind]')).toHaveAttribute("data-actor-kind", "person");
    expect(errors).toEqual([]);

    // Not for anyone else.
    const a = alice.page;
    await a.goto("/admin");
    await expect(a.getByTestId("demo-not-admin")).toHaveText("Only admins can run demos.");
    await a.getByTestId("user-menu").click();
    await expect(a.getByTestId("menu-run-demo")).toHaveCount(0);
  } finally {
    await ruth.context.close();
    await alice.context.close();
  }
});
