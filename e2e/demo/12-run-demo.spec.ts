import { expect, test } from "../support/fixtures";
import { expectNoAxeViolations, expectSessionPhase, shoot, watchErrors } from "../support/ui";
import { signedInAs } from "../support/session-ui";

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
    // Alice's refused commit is in the timeline, as a local annotation between the accept and Erin's commit.
    const note = r.getByTestId("refusal-note");
    await expect(note).toHaveCount(1);
    await expect(note).toHaveAttribute("data-source", "demo");
    await expect(note).toContainText("refused: FORBIDDEN");
    await expect(note).toContainText("local annotation");
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

test("the demo runner shows the session live beside the script, with pause, step and pace; the refused step shows inline", async ({
  browser,
}) => {
  const ruth = await signedInAs(browser, "ruth");
  try {
    const r = ruth.page;
    const errors = watchErrors(r);
    await r.goto("/admin");
    await r.getByLabel("Scenario").selectOption("lead-approval");
    await r.getByLabel("Pace").selectOption("4");
    await r.getByTestId("demo-start-paused").check();
    await r.getByTestId("run-demo").click();
    const position = r.getByTestId("demo-position");
    await expect(position).toHaveText("Step 0 of 6 · paused");
    // One step at a time: the session appears beside the script after the first.
    await r.getByTestId("demo-step").click();
    await expect(position).toHaveText("Step 1 of 6 · paused");
    const live = r.getByTestId("demo-live-session");
    await expect(live.locator('[data-type="SessionStart"]')).toHaveCount(1);
    for (let n = 2; n <= 5; n++) {
      await r.getByTestId("demo-step").click();
      await expect(position).toHaveText(`Step ${n} of 6 · paused`);
    }
    // Step 5 is Alice's commit, which the runtime refuses: inline, marked as local.
    const note = live.getByTestId("refusal-note");
    await expect(note).toContainText("refused: FORBIDDEN");
    await expect(note).toContainText("demo step 5");
    await expect(live.locator('[data-type="Commitment"]')).toHaveCount(0);
    await shoot(r, "12-demo-paused-1440-light");
    await expectNoAxeViolations(r, "demo runner, paused");
    // The pace changes while it plays; resume plays the rest.
    await r.getByLabel("Pace").selectOption("instant");
    await r.getByTestId("demo-resume").click();
    await expect(r.getByTestId("demo-run").getByRole("heading", { level: 2 }).first()).toHaveText("Played as scripted", {
      timeout: 30_000,
    });
    await expect(live.locator('[data-type="Commitment"]')).toHaveCount(1);
    await r.setViewportSize({ width: 390, height: 844 });
    await r.emulateMedia({ colorScheme: "dark" });
    await shoot(r, "12-demo-done-390-dark");
    await expectNoAxeViolations(r, "demo runner, done (390, dark)");
    expect(errors).toEqual([]);
  } finally {
    await ruth.context.close();
  }
});
