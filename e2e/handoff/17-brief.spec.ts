// The session page for the person asked to act opens with the brief: who
// asks what of them, scope, reason, deadline, the runbook rendered in place
// (also the one of an earlier, declined offer), then the actions. On a phone
// (390×844) the runbook's first heading and the Accept button share the first
// screen. Metadata waits in a collapsed "Details".
import type { APIRequestContext, Browser, Page } from "@playwright/test";
import { expect, test } from "../support/fixtures";
import { expectNoAxeViolations, shoot, uniqueSuffix, watchErrors } from "../support/ui";
import { actionButton, callAction as call, signedInAs } from "../support/session-ui";
import type { PersonKey } from "../support/people";

const RUNBOOK = `# Payments on-call runbook

Check the error budget before anything else.

\`\`\`sh
kubectl -n payments rollout status deploy/payments-api --timeout=120s
\`\`\`

| dashboard | threshold | escalation |
| --- | --- | --- |
| payments_api_latency_overview | p99 above 450 ms | secondary_oncall_engineer |
`;

const PHONE = { width: 390, height: 844 };

async function as<T>(browser: Browser, who: PersonKey, fn: (req: APIRequestContext) => Promise<T>): Promise<T> {
  const p = await signedInAs(browser, who);
  try {
    return await fn(p.context.request);
  } finally {
    await p.context.close();
  }
}

async function openAs(
  browser: Browser,
  who: PersonKey,
  sid: string,
  viewport = PHONE,
  scheme: "light" | "dark" = "light",
): Promise<{ page: Page; close: () => Promise<void>; errors: string[] }> {
  const p = await signedInAs(browser, who, { viewport });
  await p.page.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
  const errors = watchErrors(p.page);
  await p.page.goto(`/sessions/${sid}`);
  return { page: p.page, close: () => p.context.close(), errors };
}

test("the brief comes first for the target, the re-offer's target sees the earlier runbook, the approver gets an approval brief", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const intent = `Payments rotation ${tag}`;
  const scope = "payments-api primary on-call";
  const sid = await as(browser, "alice", (req) =>
    call(req, "StartSession", {
      kind: "SESSION_KIND_HANDOFF",
      intent,
      scope,
      participants: ["human:bob", "human:dave"],
      policy: "POLICY_CHOICE_LEAD_APPROVAL",
      approvers: ["human:carol"],
      ttlMs: 1_800_000,
    }),
  );
  // Alice, the owner: only what she can do now is offered, nothing disabled.
  const alice = await openAs(browser, "alice", sid, { width: 1440, height: 900 });
  const a = alice.page;
  // The scope typed at start shows before any offer; the header has no "No live stream" beside the page's "Live".
  await expect(a.getByTestId("session-facts")).toContainText(scope);
  await expect(a.getByText("No live stream")).toHaveCount(0);
  await expect(actionButton(a, "offer")).toBeVisible();
  await expect(actionButton(a, "cancel")).toBeVisible();
  await expect(a.getByTestId("action-panel").locator("[data-allowed=false]")).toHaveCount(0);
  await expect(actionButton(a, "commit")).toHaveCount(0);
  await actionButton(a, "offer").click();
  const offerForm = a.getByTestId("offer-form");
  await offerForm.getByLabel("To").selectOption("human:bob");
  await offerForm.getByLabel("Reason").fill("weekly rotation");
  await offerForm.getByTestId("offer-form-submit").click();
  await expect(a.getByTestId("action-done")).toContainText("Offer sent to Bob Ito");
  // Alice waits for Bob: one line says so; neither Offer nor Commit is listed.
  await expect(a.getByTestId("waiting-on")).toHaveText("Waiting for Bob Ito to answer the offer.");
  await expect(actionButton(a, "offer")).toHaveCount(0);
  await expect(actionButton(a, "commit")).toHaveCount(0);
  await as(browser, "alice", (req) => call(req, "AttachContext", { sessionId: sid, handoffId: "", markdown: RUNBOOK }));
  // Her own runbook does not move the session on: the notice about the offer stays.
  await expect(a.locator('[data-type="HandoffContext"]')).toHaveCount(1);
  await expect(a.getByTestId("action-done")).toContainText("Offer sent to Bob Ito");

  // Bob on a phone: the brief, the runbook's heading and Accept on the first screen.
  for (const scheme of ["light", "dark"] as const) {
    const bob = await openAs(browser, "bob", sid, PHONE, scheme);
    const b = bob.page;
    const brief = b.getByTestId("brief");
    await expect(brief).toHaveAttribute("data-kind", "offer");
    await expect(b.getByTestId("brief-headline")).toHaveText(`Alice Ng asks you to take over ${scope}`);
    await expect(b.getByTestId("brief-scope")).toHaveText(scope);
    await expect(b.getByTestId("brief-reason")).toHaveText("weekly rotation");
    await expect(b.getByTestId("brief-deadline")).toHaveAttribute("data-deadline-kind", "session");
    await expect(b.getByTestId("brief-deadline")).toContainText(/Session expires in \d+m/);
    const heading = brief.getByTestId("brief-runbook").locator("h1");
    await expect(heading).toHaveText("Payments on-call runbook");
    await expect(heading).toBeInViewport();
    await expect(actionButton(b, "accept")).toBeInViewport();
    await expect(actionButton(b, "decline")).toBeVisible();
    // Metadata is folded away.
    await expect(b.getByTestId("session-details")).not.toHaveAttribute("open", "");
    await expect(b.getByTestId("session-details").getByText("Session id")).toBeHidden();
    // Code: readable size, a copy button; the table scrolls instead of breaking words.
    const code = brief.locator("[data-code-block] pre");
    expect(Number.parseFloat(await code.evaluate((el) => getComputedStyle(el).fontSize))).toBeGreaterThanOrEqual(13);
    await expect(brief.locator("[data-code-block]").getByRole("button", { name: "Copy sh code" })).toBeVisible();
    const cell = brief.locator("td", { hasText: "payments_api_latency_overview" });
    // One line box for the cell's text: the word is not broken.
    const lines = await cell.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    });
    expect(lines).toBe(1);
    const table = brief.locator("[data-table-scroll]");
    expect(await table.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await shoot(b, `brief-offer-390-${scheme}`);
    await expectNoAxeViolations(b, `brief (390, ${scheme})`);
    expect(bob.errors).toEqual([]);
    await bob.close();
  }
  const desk = await openAs(browser, "bob", sid, { width: 1440, height: 900 });
  await expect(desk.page.getByTestId("brief")).toBeVisible();
  await expect(actionButton(desk.page, "accept")).toBeInViewport();
  await shoot(desk.page, "brief-offer-1440-light");

  // Bob declines from the brief; Alice re-offers to Dave without attaching anything new.
  await actionButton(desk.page, "decline").click();
  const decline = desk.page.getByTestId("decline-form");
  await decline.getByLabel("Reason").fill("in an incident review");
  await desk.page.waitForTimeout(2_500);
  await expect(decline.getByLabel("Reason")).toHaveValue("in an incident review");
  await decline.getByTestId("decline-form-submit").click();
  await expect(desk.page.getByTestId("action-done")).toContainText("Declined the offer from Alice Ng");
  await expect(desk.page.getByTestId("brief")).toHaveCount(0);
  await desk.close();
  // The state moved on without Alice: her notice about the offer is gone, and she may offer again.
  await expect(a.locator('[data-type="HandoffDecline"]')).toHaveCount(1);
  await expect(a.getByTestId("action-done")).toHaveCount(0);
  await expect(actionButton(a, "offer")).toBeVisible();
  await alice.close();
  const offer2 = await as(browser, "alice", (req) =>
    call(req, "Offer", { sessionId: sid, target: "human:dave", reason: "Bob is in an incident review" }),
  );
  const dave = await openAs(browser, "dave", sid);
  const d = dave.page;
  await expect(d.getByTestId("brief")).toHaveAttribute("data-kind", "offer");
  await expect(d.getByTestId("brief-reason")).toHaveText("Bob is in an incident review");
  const earlier = d.getByTestId("brief-runbook");
  await expect(earlier).toHaveCount(1);
  await expect(earlier).toHaveAttribute("data-earlier", "true");
  await expect(earlier).toContainText("From an earlier offer (offer 1, to Bob Ito, declined)");
  await expect(earlier.locator("h1")).toHaveText("Payments on-call runbook");
  await expect(actionButton(d, "accept")).toBeInViewport();
  await shoot(d, "brief-reoffer-390-light");
  await dave.close();

  // Carol, the approver, is told before Dave answers: "coming up", not counted as waiting on her.
  const carolInbox = await signedInAs(browser, "carol", { viewport: PHONE });
  const ci = carolInbox.page;
  await ci.goto("/inbox");
  const ahead = ci.getByTestId("inbox-ahead").locator(`[data-session="${sid}"]`);
  await expect(ahead).toHaveAttribute("data-kind", "APPROVAL_AHEAD");
  await expect(ahead).toContainText("Your approval next");
  await expect(ahead).toContainText(`Alice Ng offered ${scope} to Dave Park; your approval comes next, once Dave Park answers.`);
  await expect(ci.locator(`[data-testid="inbox-item"][data-kind="APPROVAL"][data-session="${sid}"]`)).toHaveCount(0);
  await shoot(ci, "inbox-ahead-390-light");
  await expectNoAxeViolations(ci, "inbox with an approval ahead (390)");

  // Dave accepts; Carol's early notice becomes the approval itself, and she gets the approval brief.
  await as(browser, "dave", (req) => call(req, "Accept", { sessionId: sid, handoffId: offer2, reason: "I have the pager" }));
  await expect(ci.locator(`[data-testid="inbox-item"][data-kind="APPROVAL"][data-session="${sid}"]`)).toContainText("Needs your approval");
  await expect(ci.getByTestId("inbox-ahead").locator(`[data-session="${sid}"]`)).toHaveCount(0);
  await carolInbox.context.close();
  const carol = await openAs(browser, "carol", sid, { width: 1440, height: 900 }, "dark");
  const c = carol.page;
  await expect(c.getByTestId("brief")).toHaveAttribute("data-kind", "approval");
  await expect(c.getByTestId("brief-headline")).toHaveText(`Alice Ng asks you to approve handing ${scope} to Dave Park`);
  await expect(c.getByTestId("brief-from-to")).toContainText("Alice Ng");
  await expect(c.getByTestId("brief-from-to")).toContainText("Dave Park");
  // The approver approves or rejects from the card (no generic commit form).
  await expect(actionButton(c, "approve")).toBeInViewport();
  await expect(actionButton(c, "reject")).toBeInViewport();
  await expect(actionButton(c, "commit")).toHaveCount(0);
  // The timeline speaks of people and scopes; the offer ids stay in the details.
  await expect(c.locator('[data-type="HandoffOffer"]').first()).toContainText(`Alice Ng offered ${scope} to Bob Ito`);
  await expect(c.locator('[data-type="HandoffDecline"]')).toContainText("Bob Ito declined the offer");
  await expect(c.locator(`[data-group="${offer2}"]`)).toContainText(/Alice Ng → (to )?\s*Dave Park/);
  await expect(c.locator(`[data-group="${offer2}"]`)).not.toContainText(offer2);
  await expect(c.getByTestId("session-facts")).toContainText("Dave Park");
  await shoot(c, "brief-approval-1440-dark");
  await expectNoAxeViolations(c, "approval brief (1440, dark)");
  await carol.close();

  // A viewer gets no brief.
  const victor = await openAs(browser, "victor", sid);
  await expect(victor.page.getByTestId("action-panel")).toHaveAttribute("data-panel", "read-only");
  await expect(victor.page.getByTestId("brief")).toHaveCount(0);
  await victor.close();
});
