// Issue 12's own scenario, the whole rotation through the browser, each
// person in their own browser context: alice hands payments on-call to bob in
// the "Hand off…" dialog, with dave "also on the rotation" and lead approval
// by carol; bob, on a 390×844 phone, declines from his brief; alice's inbox
// says it is back with her; her Offer form on the session page lists dave (a
// participant only because of the new field) and she re-offers to him; dave
// sees offer 1's runbook marked as from an earlier offer and accepts; carol
// approves from her card; a viewer sees the committed session. axe runs on the
// dialog with the new field, shot at 1440 light and 390 dark; a template keeps
// the rotation and its deep link prefills it.
//
// Inbox items are found by this session's id, never counted: other specs on
// the same app may leave items of their own.
import { expect, test } from "../support/fixtures";
import { actionButton, sessionIdOf, signedInAs } from "../support/session-ui";
import { expectNoAxeViolations, expectSessionPhase, shoot, uniqueSuffix, watchErrors } from "../support/ui";

const PHONE = { width: 390, height: 844 };
const RUNBOOK = `# Payments on-call runbook

1. Open the payments dashboard.
2. Page the DB team for replication lag.
`;

test("alice hands off to bob with dave on the rotation; bob declines on his phone; alice re-offers to dave, who accepts; carol approves", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const scope = `payments-api primary on-call ${tag}`;
  const alice = await signedInAs(browser, "alice");
  const a = alice.page;
  const errors = watchErrors(a);
  let sid = "";
  try {
    // The dialog: bob as the target, dave on the rotation, lead approval by carol.
    await a.goto("/handoff");
    const dialog = a.getByTestId("hand-off-dialog");
    await dialog.getByLabel("To", { exact: true }).selectOption("human:bob");
    const rotation = dialog.getByTestId("hand-off-rotation");
    await expect(dialog.getByRole("group", { name: /^Also on the rotation/ })).toBeVisible();
    await expect(rotation).toContainText("if Bob Ito declines you can offer it to one of them");
    // The target is not listed again; the others are, by name.
    await expect(rotation.getByTestId("hand-off-rotation-bob")).toHaveCount(0);
    await expect(rotation.getByText("Dave Park")).toBeVisible();
    await rotation.getByTestId("hand-off-rotation-dave").check();
    await dialog.getByLabel("What you hand over").fill(scope);
    await dialog.locator("#ho-reason").fill("end of my rotation");
    await dialog.getByLabel("Runbook (Markdown, optional)").fill(RUNBOOK);
    await dialog.getByTestId("hand-off-policy-approval").check();
    await dialog.getByTestId("hand-off-approver-carol").check();
    await rotation.scrollIntoViewIfNeeded();
    await a.emulateMedia({ colorScheme: "light", reducedMotion: "reduce" });
    await shoot(a, "25-hand-off-rotation-1440-light");
    await expectNoAxeViolations(a, "hand-off dialog with the rotation (1440, light)");

    await dialog.getByTestId("hand-off-submit").click();
    await a.waitForURL(/\/sessions\/[^/?]+$/);
    sid = sessionIdOf(a);
    await expect(a.locator('[data-type="HandoffContext"]')).toHaveCount(1);
    await expect(a.getByTestId("waiting-on")).toContainText("Bob Ito");
    // Dave is a participant of the session from the start.
    await a.getByTestId("session-details").locator("summary").click();
    await expect(a.getByTestId("session-details")).toContainText("Participants (4)");
    await expect(a.getByTestId("session-details")).toContainText("human:dave");

    // Bob, on his phone, declines from his brief.
    const bob = await signedInAs(browser, "bob", { viewport: PHONE });
    const b = bob.page;
    await b.goto(`/sessions/${sid}`);
    await expect(b.getByTestId("brief")).toHaveAttribute("data-kind", "offer");
    await expect(b.getByTestId("brief-headline")).toHaveText(`Alice Ng asks you to take over ${scope}`);
    await expect(actionButton(b, "decline")).toBeVisible();
    await actionButton(b, "decline").click();
    const decline = b.getByTestId("decline-form");
    await decline.getByLabel("Reason").fill("in an incident review");
    await decline.getByTestId("decline-form-submit").click();
    await expect(b.getByTestId("action-done")).toContainText("Declined the offer from Alice Ng");
    await expect(b.getByTestId("brief")).toHaveCount(0);
    await bob.context.close();

    // Alice's inbox: it is back with her.
    await a.goto("/inbox");
    const item = a.locator(`[data-testid="inbox-item"][data-session="${sid}"]`);
    await expect(item).toHaveAttribute("data-kind", "DECLINED");
    await expect(item).toContainText("Back with you");
    await expect(item).toContainText(`Bob Ito declined ${scope}; offer it to someone else or cancel the handoff.`);

    // Her Offer form lists dave (on the rotation); she re-offers to him.
    await item.getByTestId("inbox-open").click();
    await actionButton(a, "offer").click();
    const offer = a.getByTestId("offer-form");
    const to = offer.getByLabel("To");
    await expect(to.locator('option[value="human:dave"]')).toHaveCount(1);
    await to.selectOption("human:dave");
    await offer.getByLabel("Reason").fill("Bob is in an incident review");
    await offer.getByTestId("offer-form-submit").click();
    await expect(a.getByTestId("action-done")).toContainText("Offer sent to Dave Park");
    await expect(a.locator('[data-type="HandoffOffer"]')).toHaveCount(2);

    // Dave sees offer 1's runbook, marked as earlier, and accepts.
    const dave = await signedInAs(browser, "dave");
    const d = dave.page;
    await d.goto(`/sessions/${sid}`);
    await expect(d.getByTestId("brief")).toHaveAttribute("data-kind", "offer");
    await expect(d.getByTestId("brief-reason")).toHaveText("Bob is in an incident review");
    const earlier = d.getByTestId("brief-runbook");
    await expect(earlier).toHaveAttribute("data-earlier", "true");
    await expect(earlier).toContainText("From an earlier offer (offer 1, to Bob Ito, declined)");
    await expect(earlier.locator("h1")).toHaveText("Payments on-call runbook");
    await actionButton(d, "accept").click();
    await d.getByTestId("accept-form").getByLabel("Reason").fill("I have the pager");
    await d.getByTestId("accept-form-submit").click();
    await expectSessionPhase(d, "Accepted", "Awaiting approval");
    await dave.context.close();

    // Carol approves from her card.
    const carol = await signedInAs(browser, "carol");
    const c = carol.page;
    await c.goto(`/sessions/${sid}`);
    await expect(c.getByTestId("brief")).toHaveAttribute("data-kind", "approval");
    await expect(c.getByTestId("brief-headline")).toHaveText(`Alice Ng asks you to approve handing ${scope} to Dave Park`);
    await actionButton(c, "approve").click();
    const approve = c.getByTestId("approve-form");
    await expect(approve).toContainText(`Dave Park takes over ${scope}.`);
    await approve.getByTestId("approve-form-submit").click();
    await c.getByTestId("approve-confirm").getByTestId("approve-confirm-confirm").click();
    await expectSessionPhase(c, "Committed", "Committed");
    await carol.context.close();

    // A viewer sees the committed session: dave takes over, approved by carol.
    const victor = await signedInAs(browser, "victor");
    const v = victor.page;
    await v.goto(`/sessions/${sid}`);
    await expectSessionPhase(v, "Committed", "Committed");
    await expect(v.getByTestId("commitment")).toContainText("Dave Park (human:dave) takes over");
    await expect(v.locator('[data-type="Commitment"] [data-actor-kind]')).toContainText("Carol Lee");
    await expect(v.getByTestId("action-panel")).toHaveAttribute("data-panel", "read-only");
    await victor.context.close();
    expect(errors).toEqual([]);
  } finally {
    await alice.context.close();
  }

  // The dialog with the new field on a phone, dark (nothing sent).
  const phone = await signedInAs(browser, "alice", { viewport: PHONE });
  const p = phone.page;
  try {
    await p.emulateMedia({ colorScheme: "dark", reducedMotion: "reduce" });
    await p.goto("/handoff");
    const d = p.getByTestId("hand-off-dialog");
    await d.getByLabel("To", { exact: true }).selectOption("human:bob");
    const rotation = d.getByTestId("hand-off-rotation");
    await rotation.getByTestId("hand-off-rotation-dave").check();
    await rotation.scrollIntoViewIfNeeded();
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await shoot(p, "25-hand-off-rotation-390-dark");
    await expectNoAxeViolations(p, "hand-off dialog with the rotation (390, dark)");

    // Kept in a template: its deep link prefills the rotation (dave ticked, bob still the target).
    await d.getByLabel("What you hand over").fill(scope);
    await d.getByTestId("hand-off-save-template").click();
    await d.getByTestId("hand-off-template-name").fill(`Rotation ${tag}`);
    await d.getByTestId("hand-off-template-save").click();
    await expect(d.getByTestId("hand-off-notice")).toHaveText(`Saved as the template “Rotation ${tag}”.`);
    await expect(p).toHaveURL(/\/handoff\?template=[0-9a-f-]{36}$/);
    const templateUrl = p.url();
    await p.goto("/");
    await p.goto(templateUrl);
    await expect(d.getByLabel("What you hand over")).toHaveValue(scope);
    await expect(d.getByLabel("To", { exact: true })).toHaveValue("human:bob");
    await expect(d.getByTestId("hand-off-rotation-dave")).toBeChecked();
    await expect(d.getByTestId("hand-off-rotation-carol")).not.toBeChecked();
    await d.getByTestId("hand-off-template-delete").click();
    await expect(d.getByTestId("hand-off-notice")).toHaveText(`Deleted the template “Rotation ${tag}”.`);
  } finally {
    await phone.context.close();
  }
});
