import { expect, test } from "../support/fixtures";
import { TASK_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { expectRowPhase, expectSessionPhase, listRow, timelineSequences, uniqueSuffix } from "../support/ui";

test("a task flows from request to commitment with a live progress bar", async ({ page, context }) => {
  const planner = new Agent("agent://billing/planner");
  const worker = new Agent("agent://billing/worker-7");
  const sid = newSessionId();
  const intent = `E2E export ledger ${uniqueSuffix()}`;

  await page.goto("/");
  await planner.start(sid, TASK_MODE, intent, [planner.id, worker.id]);
  await expectRowPhase(page, sid, "Pending", "Started");
  await expect(listRow(page, sid)).toContainText("Task");

  const session = await context.newPage();
  await session.goto(`/sessions/${sid}`);
  await expectSessionPhase(session, "Pending", "Started");

  await planner.request(sid, "export-q1", "Export Q1 ledger", worker.id, "Export to the finance warehouse");
  await expectRowPhase(page, sid, "Requested", "Requested");
  await expectSessionPhase(session, "Requested", "Requested");
  // Requester → assignee, the assignee by its readable name, the full id on hover.
  await expect(listRow(page, sid).getByTestId("row-people").locator(`[data-actor-id="${worker.id}"]`)).toHaveAttribute("title", worker.id);
  await expect(listRow(page, sid).getByTestId("row-people")).toContainText("billing/worker-7");
  const progress = session.getByTestId("task-summary").getByRole("progressbar", { name: "Task progress" });
  await expect(progress).toHaveAttribute("aria-valuenow", "0");

  await worker.acceptTask(sid, "export-q1");
  await expectRowPhase(page, sid, "InProgress", "In progress");
  await expectSessionPhase(session, "InProgress", "In progress");

  await worker.update(sid, "export-q1", 0.3, "January exported");
  await expect(progress).toHaveAttribute("aria-valuenow", "30");
  await expect(session.getByTestId("task-summary")).toContainText("30%");
  await expect(session.locator('[data-sequence="4"]').getByRole("progressbar")).toHaveAttribute("aria-valuenow", "30");

  await worker.update(sid, "export-q1", 0.7, "February exported");
  await expect(progress).toHaveAttribute("aria-valuenow", "70");
  await expect(session.getByTestId("task-summary")).toContainText("February exported");

  await worker.complete(sid, "export-q1", "Q1 ledger exported", { rows: 48210, file: "q1.parquet" });
  await expectRowPhase(page, sid, "Completed", "Completed");
  await expectSessionPhase(session, "Completed", "Completed");
  await expect(progress).toHaveAttribute("aria-valuenow", "100");
  const report = session.getByTestId("task-report");
  await expect(report).toContainText("Q1 ledger exported");
  await expect(report.locator('[data-content="json"]')).toContainText("48210");

  await planner.commit(sid, TASK_MODE, "task.completed", true, "ledger verified");
  await expectRowPhase(page, sid, "Committed", "Committed");
  await expectSessionPhase(session, "Committed", "Committed");
  await expect(session.getByTestId("commitment")).toContainText("task.completed");
  await expect(session.getByTestId("stream-ended")).toBeVisible();
  expect(await timelineSequences(session)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  await expect(session.locator('[data-sequence="5"]').getByRole("progressbar")).toHaveAttribute("aria-valuenow", "70");
});
