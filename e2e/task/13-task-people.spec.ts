import { expect, test } from "../support/fixtures";
import { expectSessionPhase, uniqueSuffix, watchErrors } from "../support/ui";
import { actionButton, FAKE_NOTIFICATIONS, signedInAs } from "../support/session-ui";

test("a task driven by people: request, take, progress, complete, commit; the assignee is notified after opting in", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const intent = `Export Q1 ledger ${tag}`;
  const alice = await signedInAs(browser, "alice");
  const dave = await signedInAs(browser, "dave");
  await dave.context.addInitScript(FAKE_NOTIFICATIONS);
  const errors = [watchErrors(alice.page), watchErrors(dave.page)];
  try {
    // Dave opts in to notifications; nothing is asked before he clicks.
    const d = dave.page;
    await d.goto("/inbox");
    // The server renders Dave's inbox into the page: nothing waits on him yet.
    const inboxHtml = async (): Promise<string> => (await d.request.get("/inbox")).text();
    expect(await inboxHtml()).toMatch(/data-testid="inbox-empty"/);
    expect(await d.evaluate(() => (window as unknown as { __notes: unknown[] }).__notes.length)).toBe(0);
    await d.getByTestId("enable-notifications").click();
    await expect(d.getByTestId("notifications-on")).toBeVisible();

    const a = alice.page;
    await a.goto("/sessions/new");
    const form = a.getByTestId("new-session-form");
    await form.getByLabel("Task").check();
    await expect(form.getByLabel("Implicit accept")).toBeDisabled();
    await form.getByLabel("What is it for?").fill(intent);
    await form.getByTestId("participant-people").getByLabel("Dave Park").check();
    await form.getByTestId("start-session").click();
    await expect(a).toHaveURL(/\/sessions\/[0-9a-f-]{36}$/);
    await expectSessionPhase(a, "Pending", "Started");

    await actionButton(a, "taskRequest").click();
    const request = a.getByTestId("task-request-form");
    await expect(request.getByLabel("Title")).toHaveValue(intent);
    await request.getByLabel("Assignee").selectOption("human:dave");
    await request.getByLabel("Instructions").fill("Export to the finance warehouse");
    await request.getByLabel("Input (JSON)").fill("{nope");
    await request.getByTestId("task-request-form-submit").click();
    await expect(request.getByLabel("Input (JSON)")).toHaveAttribute("aria-invalid", "true");
    await request.getByLabel("Input (JSON)").fill('{"quarter": "Q1"}');
    await request.getByTestId("task-request-form-submit").click();
    await expectSessionPhase(a, "Requested", "Requested");

    // Dave is notified and finds the task in his inbox.
    await expect(d.getByTestId("nav-inbox-count")).toHaveText("1");
    await expect
      .poll(() => d.evaluate(() => (window as unknown as { __notes: { body: string }[] }).__notes.map((n) => n.body)))
      .toEqual([expect.stringContaining("Alice Ng")]);
    const item = d.getByTestId("inbox-item").filter({ hasText: intent });
    await expect(item).toHaveAttribute("data-kind", "TASK");
    // The page's HTML holds the item too (its first view, with who asked by name), not a "Loading…".
    const html = await inboxHtml();
    expect(html).toMatch(/data-testid="inbox-item" data-kind="TASK"/);
    expect(html).toContain(intent);
    expect(html).toContain("Alice Ng");
    expect(html).not.toContain('data-testid="inbox-empty"');
    await item.getByTestId("inbox-open").click();
    await actionButton(d, "taskAccept").click();
    await d.getByTestId("task-accept-form-submit").click();
    await expectSessionPhase(d, "InProgress", "In progress");

    await actionButton(d, "taskUpdate").click();
    await d.getByTestId("task-update-form").getByLabel("Progress (%)").fill("40");
    await d.getByTestId("task-update-form").getByLabel("Message").fill("January and February exported");
    await d.getByTestId("task-update-form-submit").click();
    await expect(a.getByTestId("task-summary").getByRole("progressbar", { name: "Task progress" })).toHaveAttribute("aria-valuenow", "40");

    await actionButton(d, "taskComplete").click();
    const complete = d.getByTestId("task-complete-form");
    await complete.getByLabel("Summary").fill("Q1 ledger exported");
    await complete.getByLabel("Output").fill('{"rows": 48210}');
    await complete.getByTestId("task-complete-form-submit").click();
    await expectSessionPhase(d, "Completed", "Completed");

    // Alice commits (default policy: the owner), after confirming.
    await expectSessionPhase(a, "Completed", "Completed");
    await expect(a.getByTestId("nav-inbox-count")).toHaveText("1");
    await actionButton(a, "commit").click();
    const commit = a.getByTestId("task-commit-form");
    await expect(commit.getByLabel("Reason")).toHaveValue("Q1 ledger exported");
    await commit.getByTestId("task-commit-form-submit").click();
    await a.getByTestId("task-commit-confirm-confirm").click();
    await expectSessionPhase(a, "Committed", "Committed");
    await expectSessionPhase(d, "Committed", "Committed");
    await expect(a.getByTestId("commitment")).toContainText("task.completed");
    await expect(a.getByTestId("nav-inbox-count")).toHaveCount(0);
    expect(errors.flat()).toEqual([]);
  } finally {
    await alice.context.close();
    await dave.context.close();
  }
});
