import fs from "node:fs";
import { request } from "@playwright/test";
import { expect, test } from "../support/fixtures";
import { expectSessionPhase, listLive, uniqueSuffix, watchErrors } from "../support/ui";
import { actionButton, connectJson, csrfTokenOf, expectConnectError, sessionIdOf, signedInAs } from "../support/session-ui";

const RUNBOOK = `# Payments on-call runbook

## Before you accept
- Check the pager app
- Confirm dashboard access

1. Read the open incidents
2. Ask about anything unclear
`;

// People, each in their own browser, drive a handoff that needs the lead's
// approval, start to finish, through the console only.
test("an on-call rotation with lead approval, driven by people in their own browsers while a viewer watches", async ({ browser }) => {
  const tag = uniqueSuffix();
  const intent = `On-call rotation ${tag}`;
  const alice = await signedInAs(browser, "alice");
  const bob = await signedInAs(browser, "bob");
  const carol = await signedInAs(browser, "carol");
  const dave = await signedInAs(browser, "dave");
  const victor = await signedInAs(browser, "victor");
  const errors = [alice, bob, carol, dave, victor].map((p) => watchErrors(p.page));
  try {
    // Bob and Dave keep their inboxes open; nothing waits on them yet.
    await bob.page.goto("/inbox");
    await dave.page.goto("/inbox");
    await expect(bob.page.getByTestId("inbox-empty")).toBeVisible();
    await expect(bob.page.getByTestId("nav-inbox-count")).toHaveCount(0);

    // Alice starts the rotation: people from the directory, lead approval by Carol.
    const a = alice.page;
    await a.goto("/");
    await a.getByTestId("new-session").click();
    await expect(a).toHaveURL(/\/sessions\/new$/);
    const form = a.getByTestId("new-session-form");
    await form.getByLabel("What is it for?").fill(intent);
    await form.getByLabel("Scope").fill("payments-api primary on-call");
    const people = form.getByTestId("participant-people");
    for (const name of ["Bob Ito", "Dave Park"]) await people.getByLabel(name).check();
    await form.getByLabel("Requires lead approval").check();
    await form.getByTestId("approver-choices").getByLabel("Carol Lee").check();
    await form.getByLabel("Time to live (minutes)").fill("30");
    await form.getByTestId("start-session").click();
    await expect(a).toHaveURL(/\/sessions\/[0-9a-f-]{36}$/);
    const sid = sessionIdOf(a);
    await expect(a.getByTestId("session-intent")).toHaveText(intent);
    await expectSessionPhase(a, "Pending", "Started");

    // The viewer watches from here on.
    const v = victor.page;
    await v.goto(`/sessions/${sid}`);
    await expect(v.getByTestId("session-intent")).toHaveText(intent);
    await expect(v.getByTestId("action-panel")).toHaveAttribute("data-panel", "read-only");
    await expect(v.getByTestId("read-only-note")).toBeVisible();
    await expect(v.getByTestId("action-panel").getByRole("button")).toHaveCount(0);

    // Alice's commit is not possible (the policy names Carol), so it is not offered (issue 12: only the actions that apply).
    await expect(actionButton(a, "commit")).toHaveCount(0);

    // Offer to Bob, then attach the runbook (previewed first).
    await actionButton(a, "offer").click();
    const offer = a.getByTestId("offer-form");
    await offer.getByLabel("To").selectOption("human:bob");
    await offer.getByLabel("Reason").fill("weekly rotation");
    await offer.getByTestId("offer-form-submit").click();
    await expect(a.getByTestId("action-done")).toContainText("Offer sent to Bob Ito");
    await expectSessionPhase(a, "OfferPending", "Offered");
    await expect(actionButton(a, "offer")).toHaveCount(0);
    await expect(actionButton(a, "commit")).toHaveCount(0);
    await expect(a.getByTestId("waiting-on")).toHaveText("Waiting for Bob Ito to answer the offer.");

    await actionButton(a, "attachContext").click();
    const attach = a.getByTestId("attach-form");
    await attach.getByRole("textbox").fill(RUNBOOK);
    await attach.getByTestId("markdown-preview-toggle").click();
    await expect(attach.getByTestId("markdown-preview").locator("h1")).toHaveText("Payments on-call runbook");
    await attach.getByTestId("attach-form-submit").click();
    await expect(a.getByTestId("action-done")).toContainText("Runbook attached");
    await expectSessionPhase(a, "ContextSharing", "Offered");

    // Bob: the offer arrives in his inbox (count in the navigation), he reads the runbook and declines.
    const b = bob.page;
    await expect(b.getByTestId("nav-inbox-count")).toHaveText("1");
    const item = b.getByTestId("inbox-item").filter({ hasText: intent });
    await expect(item).toHaveAttribute("data-kind", "OFFER");
    await expect(item).toContainText("Alice Ng");
    await item.getByTestId("inbox-open").click();
    await expect(b).toHaveURL(new RegExp(`/sessions/${sid}$`));
    await expect(b.locator('[data-type="HandoffContext"] [data-content="markdown"] h1')).toHaveText("Payments on-call runbook");
    await expect(actionButton(b, "accept")).toHaveAttribute("data-allowed", "true");
    await actionButton(b, "decline").click();
    const decline = b.getByTestId("decline-form");
    // A decline needs a reason.
    await decline.getByTestId("decline-form-submit").click();
    await expect(decline.getByLabel("Reason")).toHaveAttribute("aria-invalid", "true");
    await expect(decline.getByLabel("Reason")).toBeFocused();
    await decline.getByLabel("Reason").fill("in an incident review until noon");
    await decline.getByTestId("decline-form-submit").click();
    await expect(b.getByTestId("action-done")).toContainText("Declined the offer");
    await expectSessionPhase(b, "Declined", "Declined");
    await expect(b.getByTestId("nav-inbox-count")).toHaveCount(0);
    await expectSessionPhase(v, "Declined", "Declined");

    // Alice re-offers to Dave; a double click sends one offer, not two.
    await expectSessionPhase(a, "Declined", "Declined");
    await actionButton(a, "offer").click();
    const reoffer = a.getByTestId("offer-form");
    await reoffer.getByLabel("To").selectOption("human:dave");
    await reoffer.getByLabel("Reason").fill("Bob is in an incident review");
    await reoffer.getByTestId("offer-form-submit").dblclick();
    await expect(a.getByTestId("action-done")).toContainText("Offer sent to Dave Park");
    await expectSessionPhase(a, "OfferPending", "Offered");
    await a.waitForTimeout(1_000);
    await expect(a.locator('[data-type="HandoffOffer"]')).toHaveCount(2);
    await expect(v.locator('[data-type="HandoffOffer"]')).toHaveCount(2);

    // Dave's list shows, with one toggle (kept in the URL), the sessions waiting on him: this one.
    const d = dave.page;
    await d.goto("/");
    await listLive(d);
    await d.getByTestId("filter-waiting").click();
    await expect(d).toHaveURL(/[?&]waiting=human%3Adave/);
    const mine = d.locator("[data-row]").filter({ hasText: intent });
    await expect(mine).toBeVisible();
    await expect(mine.getByTestId("row-waiting-on")).toHaveText("Dave Park (person)");
    await expect(mine.getByTestId("row-people")).toContainText("Alice Ng");
    await expect(d.getByTestId("filter-waiting")).toHaveAttribute("aria-pressed", "true");
    await d.goto("/inbox");

    // Dave accepts from his inbox.
    await expect(d.getByTestId("nav-inbox-count")).toHaveText("1");
    await d.getByTestId("inbox-item").filter({ hasText: intent }).getByTestId("inbox-open").click();
    await actionButton(d, "accept").click();
    await d.getByTestId("accept-form").getByLabel("Reason").fill("I have the pager");
    await d.getByTestId("accept-form-submit").click();
    // Under lead approval an accepted offer reads as what it is: awaiting approval.
    await expectSessionPhase(d, "Accepted", "Awaiting approval");

    // Alice still can't commit; one line says whom the session waits for.
    await expectSessionPhase(a, "Accepted", "Awaiting approval");
    await expect(actionButton(a, "commit")).toHaveCount(0);
    await expect(a.getByTestId("waiting-on")).toHaveText("Waiting for Carol Lee to approve and commit the handoff to Dave Park.");

    // Carol finds the approval in her inbox and approves from her card, after confirming:
    // no commit form, no authority scope to type (it comes from the policy).
    const c = carol.page;
    // The list knows the approver, not the owner, must act now.
    await c.goto("/?waiting=human%3Acarol");
    const approvalRow = c.locator("[data-row]").filter({ hasText: intent });
    await expect(approvalRow.getByTestId("row-waiting-on")).toHaveText("Carol Lee (person)");
    await expect(approvalRow.locator("[data-badge]")).toHaveText("Status: Awaiting approval");
    await c.goto("/inbox");
    const approval = c.getByTestId("inbox-item").filter({ hasText: intent });
    await expect(approval).toHaveAttribute("data-kind", "APPROVAL");
    await expect(c.getByTestId("nav-inbox-count")).toHaveText("1");
    await approval.getByTestId("inbox-open").click();
    await expect(actionButton(c, "commit")).toHaveCount(0);
    await expect(actionButton(c, "reject")).toBeVisible();
    await actionButton(c, "approve").click();
    const commit = c.getByTestId("approve-form");
    await expect(commit).toContainText("Dave Park takes over payments-api primary on-call.");
    await expect(commit.getByLabel("Authority scope")).toHaveCount(0);
    await expect(commit.getByLabel("Reason")).toHaveValue(/Dave Park \(human:dave\) takes over payments-api primary on-call/);
    await commit.getByTestId("approve-form-submit").click();
    const dialog = c.getByTestId("approve-confirm");
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText("Dave Park");
    // Focus starts on the safe choice; Escape goes back without committing.
    await expect(dialog.getByRole("button", { name: "Go back" })).toBeFocused();
    await c.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
    await commit.getByTestId("approve-form-submit").click();
    await dialog.getByTestId("approve-confirm-confirm").click();
    await expectSessionPhase(c, "Committed", "Committed");
    await expect(c.getByTestId("commitment")).toContainText("Dave Park (human:dave) takes over");
    await expect(c.getByTestId("commitment")).toContainText("Authority scope: approver under");

    // Everyone sees the outcome live, the viewer included.
    for (const p of [a, b, d, v]) {
      await expectSessionPhase(p, "Committed", "Committed");
      await expect(p.getByTestId("commitment")).toContainText("handoff.accepted");
    }
    await expect(a.getByTestId("action-panel")).toHaveAttribute("data-panel", "closed");
    await expect(v.getByTestId("action-panel").getByRole("button")).toHaveCount(0);

    // The audit trail: people are marked as people, with their names.
    const offerRow = v.locator('[data-type="HandoffOffer"]').first();
    await expect(offerRow.locator("[data-actor-kind]")).toHaveAttribute("data-actor-kind", "person");
    await expect(offerRow.locator("[data-actor-kind]")).toContainText("Alice Ng");
    await expect(offerRow.locator("[data-actor-kind]")).toContainText("person");
    expect(await v.locator('[data-type="Commitment"] [data-actor-kind]').textContent()).toContain("Carol Lee");
    const [download] = await Promise.all([v.waitForEvent("download"), v.getByTestId("export-ndjson").click()]);
    const lines = fs
      .readFileSync(await download.path(), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { message_type: string; sender: string; actor_kind: string });
    expect(lines.filter((l) => l.message_type === "HandoffOffer")).toHaveLength(2);
    expect(lines.map((l) => [l.sender, l.actor_kind])).toContainEqual(["human:carol", "person"]);
    expect(lines.every((l) => l.actor_kind === "person")).toBe(true);

    // Forged and replayed requests to an action endpoint are refused.
    const offerBody = { sessionId: sid, messageId: globalThis.crypto.randomUUID(), target: "human:bob" };
    // The viewer's own cookie and CSRF token: a viewer may not act.
    await expectConnectError(
      await connectJson(victor.context.request, "Offer", offerBody, { "x-baton-csrf": await csrfTokenOf(victor.context.request) }),
      403,
      "permission_denied",
      /read-only|viewer/,
    );
    // No session at all.
    const anonymous = await request.newContext({ baseURL: test.info().project.use.baseURL, storageState: { cookies: [], origins: [] } });
    await expectConnectError(await connectJson(anonymous, "Offer", offerBody), 401, "unauthenticated");
    await anonymous.dispose();
    // Alice's cookie without the CSRF token.
    await expectConnectError(await connectJson(alice.context.request, "Offer", offerBody), 403, "permission_denied", /CSRF/);
    // None of them reached the session.
    await v.reload();
    await expect(v.locator('[data-type="HandoffOffer"]')).toHaveCount(2);
    expect(errors.flat()).toEqual([]);
  } finally {
    for (const p of [alice, bob, carol, dave, victor]) await p.context.close();
  }
});
