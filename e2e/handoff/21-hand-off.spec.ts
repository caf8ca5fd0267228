// "Hand off…" in one dialog: alice hands payments on-call to bob with a
// runbook and lead approval (carol) from the header's button; the dialog
// sends SessionStart, Offer and Context and opens the session. Bob, on a
// 390×844 phone, sees the brief with the runbook and Accept on the first
// screen. A template alice saves prefills the dialog next time (also by its
// deep link), and can be deleted. axe passes on the dialog; it is shot at
// 1440 and 390 px, light and dark.
import type { Page } from "@playwright/test";
import { expect, test } from "../support/fixtures";
import { actionButton, sessionIdOf, signedInAs } from "../support/session-ui";
import { expectNoAxeViolations, shoot, uniqueSuffix, watchErrors } from "../support/ui";

const PHONE = { width: 390, height: 844 };
const RUNBOOK = `# Payments on-call runbook

Check the error budget first.

1. Open the payments dashboard.
2. Page the DB team for replication lag.
`;

async function fillDialog(page: Page, scope: string): Promise<void> {
  const d = page.getByTestId("hand-off-dialog");
  await d.getByLabel("To", { exact: true }).selectOption("human:bob");
  await d.getByLabel("What you hand over").fill(scope);
  await d.locator("#ho-reason").fill("end of my rotation");
  await d.getByLabel("Runbook (Markdown, optional)").fill(RUNBOOK);
  await d.getByTestId("hand-off-policy-approval").check();
  await d.getByTestId("hand-off-approver-carol").check();
  await d.getByLabel("Time to live (minutes)").fill("90");
}

test("alice hands off to bob in one dialog; bob's phone shows the brief with the runbook and Accept; templates prefill", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const scope = `payments-api primary on-call ${tag}`;
  const alice = await signedInAs(browser, "alice");
  const a = alice.page;
  const errors = watchErrors(a);
  await a.goto("/");
  await a.getByTestId("header-hand-off").click();
  await expect(a).toHaveURL(/\/handoff$/);
  const dialog = a.getByTestId("hand-off-dialog");
  await expect(dialog).toBeVisible();
  // Focus starts in the dialog, on the first field.
  await expect(dialog.getByLabel("To", { exact: true })).toBeFocused();

  // Nothing filled in: the errors are said next to the fields, and focus goes to the first.
  await dialog.getByTestId("hand-off-submit").click();
  await expect(dialog.getByLabel("To", { exact: true })).toHaveAttribute("aria-invalid", "true");
  await expect(dialog.getByText("Choose who takes it over.")).toBeVisible();
  await expect(dialog.getByLabel("To", { exact: true })).toBeFocused();

  await fillDialog(a, scope);
  for (const scheme of ["light", "dark"] as const) {
    await a.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await shoot(a, `hand-off-dialog-1440-${scheme}`);
  }
  await a.emulateMedia({ colorScheme: "light" });
  await expectNoAxeViolations(a, "hand-off dialog (1440)");

  // Save the form as a template, then hand off.
  await dialog.getByTestId("hand-off-save-template").click();
  await dialog.getByTestId("hand-off-template-name").fill(`Weekly payments ${tag}`);
  await dialog.getByTestId("hand-off-template-save").click();
  await expect(dialog.getByTestId("hand-off-notice")).toHaveText(`Saved as the template “Weekly payments ${tag}”.`);
  await expect(a).toHaveURL(/\/handoff\?template=[0-9a-f-]{36}$/);
  const templateUrl = a.url();

  await dialog.getByTestId("hand-off-submit").click();
  await a.waitForURL(/\/sessions\/[^/?]+$/);
  const sid = sessionIdOf(a);
  // The three messages, in order, by alice.
  await expect(a.locator('[data-type="SessionStart"]')).toHaveCount(1);
  await expect(a.locator('[data-type="HandoffOffer"]')).toHaveCount(1);
  await expect(a.locator('[data-type="HandoffContext"]')).toHaveCount(1);
  await expect(a.getByTestId("waiting-on")).toContainText("Bob Ito");
  expect(errors).toEqual([]);

  // Bob on a phone: the brief, the runbook's heading and Accept on the first screen.
  for (const scheme of ["light", "dark"] as const) {
    const bob = await signedInAs(browser, "bob", { viewport: PHONE });
    const b = bob.page;
    await b.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    await b.goto(`/sessions/${sid}`);
    const brief = b.getByTestId("brief");
    await expect(brief).toHaveAttribute("data-kind", "offer");
    await expect(b.getByTestId("brief-headline")).toHaveText(`Alice Ng asks you to take over ${scope}`);
    await expect(b.getByTestId("brief-reason")).toHaveText("end of my rotation");
    const heading = brief.getByTestId("brief-runbook").locator("h1");
    await expect(heading).toHaveText("Payments on-call runbook");
    await expect(heading).toBeInViewport();
    await expect(actionButton(b, "accept")).toBeInViewport();
    await shoot(b, `hand-off-brief-390-${scheme}`);
    await bob.context.close();
  }

  // Next time, the template prefills the dialog: picked from the list ...
  await a.goto("/handoff");
  await expect(dialog).toBeVisible();
  await dialog.getByTestId("hand-off-template").selectOption({ label: `Weekly payments ${tag}` });
  await expect(dialog.getByLabel("To", { exact: true })).toHaveValue("human:bob");
  await expect(dialog.getByLabel("What you hand over")).toHaveValue(scope);
  await expect(dialog.getByLabel("Runbook (Markdown, optional)")).toHaveValue(RUNBOOK);
  await expect(dialog.getByTestId("hand-off-policy-approval")).toBeChecked();
  await expect(dialog.getByTestId("hand-off-approver-carol")).toBeChecked();
  await expect(dialog.getByLabel("Time to live (minutes)")).toHaveValue("90");
  // Esc closes the dialog (back to the list).
  await a.keyboard.press("Escape");
  await expect(a).toHaveURL(/\/$/);
  await alice.context.close();

  // ... and by its deep link, on a phone, light and dark.
  for (const scheme of ["light", "dark"] as const) {
    const phone = await signedInAs(browser, "alice", { viewport: PHONE });
    const p = phone.page;
    await p.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    // On a phone the way in is the list's button, on the first screen (the header has no room for it).
    await p.goto("/");
    await expect(p.getByTestId("hand-off")).toBeInViewport();
    await expect(p.getByTestId("header-hand-off")).toBeHidden();
    await shoot(p, `hand-off-list-390-${scheme}`);
    await p.goto(templateUrl);
    const d = p.getByTestId("hand-off-dialog");
    await expect(d.getByLabel("What you hand over")).toHaveValue(scope);
    await expect(d.getByLabel("To", { exact: true })).toHaveValue("human:bob");
    // The dialog fills the phone's width without sideways scrolling.
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await shoot(p, `hand-off-dialog-390-${scheme}`);
    await expectNoAxeViolations(p, `hand-off dialog (390, ${scheme})`);
    if (scheme === "dark") {
      // Delete the template: the choice is gone.
      await d.getByTestId("hand-off-template-delete").click();
      await expect(d.getByTestId("hand-off-notice")).toHaveText(`Deleted the template “Weekly payments ${tag}”.`);
      await expect(d.getByTestId("hand-off-template").locator("option", { hasText: `Weekly payments ${tag}` })).toHaveCount(0);
    }
    await phone.context.close();
  }
});

test("after a partial failure the dialog says what was sent, survives a reload, and finishes the same hand-off", async ({ browser }) => {
  const tag = uniqueSuffix();
  const scope = `search-api secondary on-call ${tag}`;
  const alice = await signedInAs(browser, "alice");
  const a = alice.page;
  await a.goto("/handoff");
  const dialog = a.getByTestId("hand-off-dialog");
  await fillDialog(a, scope);
  // The runbook's request never reaches the console (the connection drops).
  await a.route("**/baton.v1.ActionService/AttachContext", (route) => route.abort("connectionreset"));
  await dialog.getByTestId("hand-off-submit").click();
  const progress = dialog.getByTestId("hand-off-progress");
  await expect(progress.locator('[data-step="start"]')).toHaveText("Session started.");
  await expect(progress.locator('[data-step="offer"]')).toHaveText("Offer sent.");
  await expect(progress.locator('[data-step="context"]')).toHaveAttribute("data-state", "failed");
  await expect(progress.locator('[data-step="context"]')).toContainText("Runbook not attached: No connection to the console server.");
  await expect(dialog.getByTestId("hand-off-submit")).toHaveText("Finish handing off");
  await expect(dialog.getByLabel("What you hand over")).toBeDisabled();
  await shoot(a, "hand-off-partial-1440-light");
  await a.unroute("**/baton.v1.ActionService/AttachContext");

  // A reload keeps the attempt: the same form, locked, and Finish sends only the runbook.
  await a.reload();
  await expect(dialog.getByTestId("hand-off-interrupted")).toBeVisible();
  await expect(progress.locator('[data-step="offer"]')).toHaveText("Offer sent.");
  await expect(progress.locator('[data-step="context"]')).toHaveText("Runbook not attached yet.");
  await expect(dialog.getByLabel("What you hand over")).toHaveValue(scope);
  await dialog.getByTestId("hand-off-submit").click();
  await a.waitForURL(/\/sessions\/[^/?]+$/);
  // One session, one offer, one runbook.
  await expect(a.locator('[data-type="HandoffContext"]')).toHaveCount(1);
  await expect(a.locator('[data-type="HandoffOffer"]')).toHaveCount(1);
  await expect(a.locator('[data-type="SessionStart"]')).toHaveCount(1);
  // Done: the dialog starts empty again.
  await a.goto("/handoff");
  await expect(dialog.getByLabel("What you hand over")).toHaveValue("");
  await expect(dialog.getByTestId("hand-off-submit")).toHaveText("Hand off");
  await alice.context.close();
});

test("a person who may not start sessions is told so on /handoff and gets no button", async ({ browser }) => {
  const victor = await signedInAs(browser, "victor");
  await victor.page.goto("/handoff");
  await expect(victor.page.getByTestId("hand-off-denied")).toContainText("read-only");
  await expect(victor.page.getByTestId("header-hand-off")).toHaveCount(0);
  await victor.context.close();
});
