// The printable handover report (/sessions/[id]/report): what was handed
// from whom to whom, when, the runbook text, every decision with its reason,
// the commitment and who acted, rendered by the console's safe Markdown
// renderer; print CSS leaves only the report, light even in dark mode.
// Agents drive the session over gRPC, so no person's inbox is touched.
import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { expectNoAxeViolations, shoot, uniqueSuffix, viewportAt, watchErrors, WIDTHS } from "../support/ui";

const RUNBOOK = `# Payments on-call runbook

Check the error budget first.

\`\`\`sh
kubectl -n payments rollout status deploy/payments-api --timeout=120s
\`\`\`

<script>window.__pwned = "report"</script>
`;

test("the printable handover report says who handed what to whom, with the runbook, every decision and the commitment; print drops the console's chrome", async ({
  page,
}) => {
  const alice = new Agent("agent://oncall/alice");
  const bob = new Agent("agent://oncall/bob");
  const carol = new Agent("agent://oncall/carol");
  const sid = newSessionId();
  const intent = `E2E report ${uniqueSuffix()}`;
  await alice.start(sid, HANDOFF_MODE, intent, [alice.id, bob.id, carol.id]);
  await alice.offer(sid, "h1", bob.id, "payments-api primary on-call", "shift change at 09:00");
  await alice.context(sid, "h1", "text/markdown; charset=utf-8", RUNBOOK);
  await bob.declineHandoff(sid, "h1", "in an incident review until noon");
  await alice.offer(sid, "h2", carol.id, "payments-api primary on-call", "bob declined");
  await carol.acceptHandoff(sid, "h2", "I have the pager");
  await alice.commit(sid, HANDOFF_MODE, "handoff.accepted", true, "carol owns payments-api on-call");

  const errors = watchErrors(page);
  await page.goto(`/sessions/${sid}`);
  await expect(page.getByTestId("session-intent")).toHaveText(intent);
  await page.getByTestId("open-report").click();
  await expect(page).toHaveURL(new RegExp(`/sessions/${sid}/report$`));

  const report = page.getByTestId("handover-report").locator('[data-content="markdown"]');
  await expect(report.locator("h1")).toContainText(`Handover report: ${intent}`);
  await expect(report.getByRole("heading", { name: /Offer 1: .*alice.* → .*bob.* \(declined\)/ })).toBeVisible();
  await expect(report.getByRole("heading", { name: /Offer 2: .*alice.* → .*carol.* \(accepted\)/ })).toBeVisible();
  await expect(report).toContainText("Declined");
  await expect(report).toContainText("in an incident review until noon");
  await expect(report).toContainText("I have the pager");
  await expect(report).toContainText("carol owns payments-api on-call");
  // The runbook's text verbatim (in a code block), its script inert text.
  await expect(report.locator("pre").filter({ hasText: "kubectl -n payments rollout status" }).first()).toBeVisible();
  await expect(report).toContainText('<script>window.__pwned = "report"</script>');
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  // Every step, with who acted and what kind of actor.
  const steps = report.locator("table").last().locator("tbody tr");
  await expect(steps).toHaveCount(7);
  await expect(steps.first()).toContainText("(agent)");

  // On paper: no header, no buttons, only the report.
  await page.emulateMedia({ media: "print" });
  await expect(page.locator("header").first()).toBeHidden();
  await expect(page.getByTestId("print-report")).toBeHidden();
  await expect(report.locator("h1")).toBeVisible();
  await page.emulateMedia({ media: "screen" });

  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    for (const width of WIDTHS) {
      await page.setViewportSize(viewportAt(width));
      await expect(report.locator("h1")).toBeVisible();
      await expectNoAxeViolations(page, `report ${scheme} ${width}`);
      await shoot(page, `23-report-${scheme}-${width}`);
    }
  }
  // A dark screen prints light: the body's text is dark on paper.
  await page.emulateMedia({ media: "print", colorScheme: "dark" });
  const ink = await page.evaluate(() => getComputedStyle(document.body).color);
  expect(ink).not.toBe("rgb(241, 245, 249)");
  await page.emulateMedia({ media: "screen", colorScheme: "light" });
  expect(errors).toEqual([]);
});

test("a report link with a bad id says so and links back", async ({ page }) => {
  await page.goto("/sessions/not%20an%20id/report");
  await expect(page.getByRole("heading", { name: "Not a session id" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Back to sessions" })).toBeVisible();
});
