// v0.1 file-based handoffs in the console (issue 13). An independent v0.1
// agent (tests/support/v01_agent.py: Python standard library only, none of
// Baton's code) offers work by writing a file into the directory the console
// watches (BATON_HANDOFF_DIRS, set by playwright.config.ts); it appears on
// /files live; Bob accepts it from his browser; the file then says accepted
// with Bob's participant id as to_agent; the agent completes it; the console
// shows completed with the whole recorded history. Both pages pass axe and are
// photographed at 1440 and 390 px, light and dark.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { currentApp } from "../support/apps";
import { expect, test } from "../support/fixtures";
import { signedInAs } from "../support/session-ui";
import { atEachWidth, connectionSettled, expectNoAxeViolations, inEachScheme, shoot, uniqueSuffix, watchErrors } from "../support/ui";

const AGENT = path.join(process.cwd(), "tests", "support", "v01_agent.py");

/** The directory the console under test watches (its app's: e2e/support/apps.ts). */
function handoffDir(): string {
  return currentApp().handoffDir;
}

/** Run the v0.1 agent; returns its stdout (throws with its stderr on failure). */
function agent(...args: string[]): string {
  const r = spawnSync("python3", [AGENT, ...args], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`v01_agent.py ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

function fileOnDisk(taskId: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(handoffDir(), `${taskId}.json`), "utf8")) as Record<string, unknown>;
}

test("a v0.1 agent's file appears live, a person accepts it from the browser, the agent completes it, and the console shows the whole history", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const description = `Rotate the TLS certificates ${tag}`;
  const bob = await signedInAs(browser, "bob");
  const errors = watchErrors(bob.page);
  const page = bob.page;
  try {
    const me = (await (await page.request.get("/auth/whoami")).json()) as { participantId: string };
    expect(me.participantId).toMatch(/bob/);

    // Bob has the list open before the agent writes anything: the header links to it.
    await page.goto("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Files" }).click();
    await expect(page).toHaveURL(/\/files$/);
    await expect(page.getByRole("heading", { name: "File handoffs" })).toBeVisible();
    await connectionSettled(page);

    // The agent offers work to anyone by writing a file (its own field order, null to_agent, an extra field).
    const taskId = agent(
      "offer",
      handoffDir(),
      description,
      "--from",
      "agent://planner",
      "--context",
      "ticket=OPS-12",
      "--context",
      "env=prod",
    );
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const row = page.locator(`[data-testid="file-row"][data-task="${taskId}"]`);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute("data-status", "offered");
    await expect(row).toContainText(description);
    await expect(row).toContainText("v0.1 file");

    // The status filter is in the URL.
    await page.getByTestId("files-status").selectOption("offered");
    await expect(page).toHaveURL(/\/files\?status=offered$/);
    await expect(row).toBeVisible();

    // Bob opens it and accepts it.
    await row.getByTestId("file-open").click();
    await expect(page).toHaveURL(new RegExp(`/files/[0-9a-f]{12}/${taskId}$`));
    const detail = page.getByTestId("file-handoff");
    await expect(detail).toHaveAttribute("data-status", "offered");
    await expect(page.getByTestId("file-from")).toContainText("agent://planner");
    await expect(page.getByTestId("file-to")).toContainText("anyone");
    await expect(page.getByTestId("file-context")).toContainText("OPS-12");
    await page.getByTestId("file-fileAccept").click();
    await expect(page.getByTestId("file-result")).toHaveAttribute("data-outcome", "ok");
    await expect(detail).toHaveAttribute("data-status", "accepted");
    await expect(page.getByTestId("file-to")).toContainText("Bob Ito");

    // The file says so, with Bob's participant id; the agent, polling as v0.1 agents do, sees it.
    const accepted = JSON.parse(agent("wait", handoffDir(), taskId, "--status", "accepted", "--timeout", "10")) as Record<string, unknown>;
    expect(accepted).toMatchObject({ status: "accepted", to_agent: me.participantId, agent_version: "v01_agent.py/1" });
    expect(fileOnDisk(taskId)).toMatchObject({ to_agent: me.participantId, context: { ticket: "OPS-12", env: "prod" } });

    // The agent completes it; the page follows live, with the whole history.
    agent("complete", handoffDir(), taskId, "--context", "result=rotated");
    await expect(detail).toHaveAttribute("data-status", "completed");
    const events = page.getByTestId("file-event");
    await expect(events).toHaveCount(3);
    await expect(events.nth(0)).toHaveAttribute("data-step", "first");
    await expect(events.nth(1)).toHaveAttribute("data-step", "legal");
    await expect(events.nth(1)).toContainText("Offered → accepted");
    await expect(events.nth(2)).toHaveAttribute("data-step", "legal");
    await expect(events.nth(2)).toContainText("Accepted → completed");
    await expect(page.getByTestId("file-context")).toContainText("rotated");
    await expect(page.getByTestId("file-no-actions")).toBeVisible();
    await shoot(page, "files-handoff-completed", true);

    // Back on the list, the row says completed.
    await page.goto("/files");
    await expect(row).toHaveAttribute("data-status", "completed");
    expect(errors).toEqual([]);
  } finally {
    await bob.context.close();
  }
});

test("an offer made from the console is a v0.1 file from the person, and waits in the other person's inbox", async ({ browser }) => {
  const tag = uniqueSuffix();
  const alice = await signedInAs(browser, "alice");
  const carol = await signedInAs(browser, "carol");
  try {
    const carolId = ((await (await carol.page.request.get("/auth/whoami")).json()) as { participantId: string }).participantId;
    const aliceId = ((await (await alice.page.request.get("/auth/whoami")).json()) as { participantId: string }).participantId;
    await carol.page.goto("/inbox");
    await expect(carol.page.getByTestId("file-inbox")).toBeVisible();

    const a = alice.page;
    await a.goto("/files");
    await a.getByTestId("offer-file").locator("summary").click();
    await a.getByTestId("offer-file-description").fill(`Review the restore drill ${tag}`);
    await a.getByTestId("offer-file-to").fill(carolId);
    await a.getByTestId("offer-file-context").fill("ticket=OPS-99");
    await a.getByTestId("offer-file-submit").click();
    await expect(a.getByTestId("offer-file-result")).toHaveAttribute("data-outcome", "ok");

    // The file is plain v0.1, from Alice to Carol.
    const written = fs
      .readdirSync(handoffDir())
      .filter((n) => n.endsWith(".json"))
      .map((n) => JSON.parse(fs.readFileSync(path.join(handoffDir(), n), "utf8")) as Record<string, unknown>)
      .find((d) => d.description === `Review the restore drill ${tag}`);
    expect(written).toMatchObject({ from_agent: aliceId, to_agent: carolId, status: "offered", context: { ticket: "OPS-99" } });

    // Carol's inbox shows it, live.
    const item = carol.page.locator(`[data-testid="file-inbox-item"][data-task="${String(written?.task_id)}"]`);
    await expect(item).toBeVisible();
    await expect(item).toContainText("offered by Alice Ng");
    await shoot(carol.page, "inbox-file-handoffs");
  } finally {
    await alice.context.close();
    await carol.context.close();
  }
});

test("an invalid file is listed with its reason, and left alone", async ({ browser }) => {
  const bob = await signedInAs(browser, "bob");
  try {
    const name = `broken-${uniqueSuffix()}`;
    const file = path.join(handoffDir(), `${name}.json`);
    fs.writeFileSync(file, '{"task_id": "');
    await bob.page.goto("/files");
    const row = bob.page.locator(`[data-testid="file-row"][data-task="${name}"]`);
    await expect(row).toHaveAttribute("data-status", "invalid");
    await expect(row.getByTestId("file-problem")).toContainText(/JSON/i);
    await row.getByTestId("file-open").click();
    await expect(bob.page.getByTestId("file-invalid")).toContainText("never modifies");
    await expect(bob.page.getByTestId("file-actions")).toHaveCount(0);
    expect(fs.readFileSync(file, "utf8")).toBe('{"task_id": "');
  } finally {
    await bob.context.close();
  }
});

test("file handoff pages render well in light and dark mode (1440 and 390 px) and pass axe", async ({ browser }) => {
  const taskId = agent(
    "offer",
    handoffDir(),
    "Renew the on-call rota\nSee the wiki page for the rules.",
    "--from",
    "agent://planner",
    "--context",
    "ticket=OPS-31",
  );
  const bob = await signedInAs(browser, "bob");
  const page = bob.page;
  const errors = watchErrors(page);
  try {
    await atEachWidth(page, async (width, suffix) => {
      await page.goto("/files");
      await expect(page.locator(`[data-testid="file-row"][data-task="${taskId}"]`)).toBeVisible();
      await inEachScheme(page, async (scheme) => {
        await connectionSettled(page);
        await shoot(page, `files-list-${suffix(scheme)}`);
        // Nothing wider than the window (the header has one more link here).
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await expectNoAxeViolations(page, `/files (${suffix(scheme)})`);
      });
      await page.locator(`[data-testid="file-row"][data-task="${taskId}"]`).getByTestId("file-open").click();
      await expect(page.getByTestId("file-handoff")).toBeVisible();
      await expect(page.getByTestId("file-actions")).toBeVisible();
      await inEachScheme(page, async (scheme) => {
        await connectionSettled(page);
        await shoot(page, `files-handoff-${suffix(scheme)}`, true);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await expectNoAxeViolations(page, `file handoff (${suffix(scheme)})`);
      });
    });
    expect(errors).toEqual([]);
  } finally {
    await bob.context.close();
  }
});

test("a v0.1 agent's offer appears live in the main session list with its mode label and pill; the mode filter and search find it; the row opens its page", async ({
  browser,
}) => {
  const tag = uniqueSuffix();
  const description = `Drain the EU queue ${tag}`;
  const bob = await signedInAs(browser, "bob");
  const page = bob.page;
  const errors = watchErrors(page);
  try {
    // The list is open (and live) before the agent writes anything.
    await page.goto("/");
    await connectionSettled(page);
    const taskId = agent("offer", handoffDir(), description, "--from", "agent://planner", "--context", "ticket=OPS-77");
    const row = page.locator(`[data-row-id$="/${taskId}.json"]`);
    await expect(row).toBeVisible();
    await expect(row).toContainText(description);
    await expect(row).toContainText("v0.1 file");
    await expect(row.locator('[data-badge="Offered"]')).toBeVisible();
    await expect(row.getByTestId("row-waiting-on")).toHaveText("anyone");

    // The mode filter is in the URL and keeps it; MACP-only modes do not list it.
    await page.getByTestId("filter-mode").selectOption("file");
    await expect(page).toHaveURL(/[?&]mode=file(&|$)/);
    await expect(row).toBeVisible();
    await page.getByTestId("filter-mode").selectOption("task");
    await expect(page).toHaveURL(/[?&]mode=task(&|$)/);
    await expect(row).toHaveCount(0);

    // Search by part of the task id finds it, from a deep link too.
    await page.goto(`/?q=${taskId.slice(0, 13)}`);
    await expect(row).toBeVisible();
    await expect(page.locator("[data-row-id]")).toHaveCount(1);

    // A status change is followed live (the agent accepts as someone else, then completes).
    agent("accept", handoffDir(), taskId, "--agent", "agent://oncall");
    await expect(row.locator('[data-badge="Accepted"]')).toBeVisible();
    // An agent is named by the agents directory or its shortened id, the full id on hover.
    await expect(row.getByTestId("row-waiting-on").locator('[data-actor-id="agent://oncall"]')).toHaveAttribute("title", "agent://oncall");

    // An offer to Bob names him (a person), and waits on him: "Waiting on me" lists it.
    const me = (await (await page.request.get("/auth/whoami")).json()) as { participantId: string };
    const forBob = agent("offer", handoffDir(), `Check the EU failover ${tag}`, "--from", "agent://planner", "--to", me.participantId);
    const bobRow = page.locator(`[data-row-id$="/${forBob}.json"]`);
    await page.goto(`/?q=${tag}&waiting=${encodeURIComponent(me.participantId)}`);
    await expect(bobRow).toBeVisible();
    await expect(bobRow).toContainText("Bob Ito");
    await expect(row).toHaveCount(0);
    await page.goto(`/?q=${taskId.slice(0, 13)}`);

    // The row opens the handoff's page.
    await row.click();
    await expect(page).toHaveURL(new RegExp(`/files/[0-9a-f]{12}/${taskId}$`));
    await expect(page.getByTestId("file-handoff")).toHaveAttribute("data-status", "accepted");
    expect(errors).toEqual([]);
  } finally {
    await bob.context.close();
  }
});

test("the session list with v0.1 file rows renders well in light and dark mode (1440 and 390 px) and passes axe", async ({ browser }) => {
  const tag = uniqueSuffix();
  // MACP sessions and v0.1 files side by side.
  const planner = new Agent("agent://planner");
  const oncall = new Agent(`agent://oncall-${tag}`);
  const handoff = newSessionId();
  await planner.start(handoff, HANDOFF_MODE, `Hand over the pager ${tag}`, [planner.id, oncall.id]);
  await planner.offer(handoff, "h1", oncall.id, "pager", "night shift");
  await planner.start(newSessionId(), TASK_MODE, `Patch the staging hosts ${tag}`, [planner.id, oncall.id]);
  agent("offer", handoffDir(), `Rotate the staging keys ${tag}`, "--from", "agent://planner");
  fs.writeFileSync(path.join(handoffDir(), `broken-${tag}.json`), '{"task_id": "');
  const bob = await signedInAs(browser, "bob");
  const page = bob.page;
  const errors = watchErrors(page);
  try {
    await atEachWidth(page, async (width, suffix) => {
      await page.goto(`/?q=${tag}`);
      await expect(page.locator(`[data-row-id$="/broken-${tag}.json"] [data-badge="Invalid"]`)).toBeVisible();
      await expect(page.locator("[data-row-id]")).toHaveCount(4);
      await inEachScheme(page, async (scheme) => {
        await connectionSettled(page);
        await shoot(page, `sessions-list-files-${suffix(scheme)}`);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await expectNoAxeViolations(page, `/ with file rows (${suffix(scheme)})`);
      });
    });
    expect(errors).toEqual([]);
  } finally {
    await bob.context.close();
  }
});
