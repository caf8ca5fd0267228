import fs from "node:fs";
import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { expectRowPhase, expectSessionPhase, listRow, timelineOrder, timelineSequences, uniqueSuffix, watchErrors } from "../support/ui";

const RUNBOOK = `# Payments on-call runbook

## Before you accept

- Check the pager app
- Confirm dashboard access
  - payments-api
  - settlement

1. Read the open incidents
2. Ask about anything unclear

See [the wiki](https://wiki.example.com/payments) and ![diagram](https://example.com/diagram.png).
`;

// Markdown carrying raw HTML and a hostile link: none of it may execute or load.
const HOSTILE = `## Notes

<script>window.__pwned = "script"</script>

<img src=x onerror="window.__pwned = 'img'">

<a href="javascript:window.__pwned='link'">click me</a> and [also me](javascript:window.__pwned='md')

<iframe src="javascript:window.__pwned='iframe'"></iframe>
`;

test("a full handoff updates the list and the timeline live, step by step", async ({ page, context }) => {
  const alice = new Agent("agent://oncall/alice");
  const bob = new Agent("agent://oncall/bob");
  const carol = new Agent("agent://oncall/carol");
  const sid = newSessionId();
  const intent = `E2E pager handoff ${uniqueSuffix()}`;

  await page.goto("/");
  await expect(page.getByTestId("site-connection").locator("[data-connection]")).toHaveAttribute("data-connection", "live");

  await alice.start(sid, HANDOFF_MODE, intent, [alice.id, bob.id, carol.id]);
  await expect(listRow(page, sid)).toBeVisible();
  await expectRowPhase(page, sid, "Pending", "Started");
  await expect(listRow(page, sid)).toContainText(intent);

  // The session page, open side by side with the list; neither is reloaded.
  const session = await context.newPage();
  const errors = watchErrors(page);
  const sessionErrors = watchErrors(session);
  await session.goto(`/sessions/${sid}`);
  await expect(session.getByTestId("session-intent")).toHaveText(intent);
  await expectSessionPhase(session, "Pending", "Started");

  await alice.offer(sid, "h1", bob.id, "payments-api primary on-call", "shift change at 09:00");
  await expectRowPhase(page, sid, "OfferPending", "Offered");
  await expectSessionPhase(session, "OfferPending", "Offered");
  await expect(session.locator('[data-group="h1"]')).toContainText("Offer 1 of 1");

  await alice.context(sid, "h1", "text/markdown; charset=utf-8", RUNBOOK);
  await expectRowPhase(page, sid, "ContextSharing", "Offered");
  await expectSessionPhase(session, "ContextSharing", "Offered");
  const runbook = session.locator('[data-sequence="3"] [data-content="markdown"]');
  await expect(runbook.locator("h1")).toHaveText("Payments on-call runbook");
  await expect(runbook.locator("h2")).toHaveText("Before you accept");
  await expect(runbook.locator("ul > li")).toHaveCount(4);
  await expect(runbook.locator("ol > li")).toHaveCount(2);
  const wiki = runbook.getByRole("link", { name: "the wiki" });
  await expect(wiki).toHaveAttribute("rel", /noopener/);
  await expect(wiki).toHaveAttribute("rel", /noreferrer/);
  // Images are never fetched: a placeholder stands in.
  await expect(runbook.locator("img")).toHaveCount(0);
  await expect(runbook.locator("[data-image-placeholder]")).toContainText("Image not loaded: diagram");

  await alice.context(sid, "h1", "text/markdown", HOSTILE);
  const hostile = session.locator('[data-sequence="4"]');
  await expect(hostile.locator('[data-content="markdown"] h2')).toHaveText("Notes");
  await alice.context(sid, "h1", "text/html", '<script>window.__pwned="html"</script><img src=x onerror="window.__pwned=1">');
  await expect(session.locator('[data-sequence="5"] [data-content="download"]')).toContainText("Download context");

  await bob.declineHandoff(sid, "h1", "in an incident review until noon");
  await expectRowPhase(page, sid, "Declined", "Declined");
  await expectSessionPhase(session, "Declined", "Declined");
  await expect(session.locator('[data-group="h1"]')).toContainText("Declined");
  await expect(session.locator('[data-sequence="6"]')).toContainText("in an incident review until noon");

  // A late context on the declined offer is documentation only, and marked.
  await alice.context(sid, "h1", "text/plain", "fyi: the pager PIN is in the vault");
  await expect(session.locator('[data-sequence="7"]')).toContainText("Late context");

  // Re-offer to another target: a second group, in order.
  await alice.offer(sid, "h2", carol.id, "payments-api primary on-call", "bob declined");
  await expectRowPhase(page, sid, "OfferPending", "Offered");
  await expectSessionPhase(session, "OfferPending", "Offered");
  await expect(session.locator('[data-group="h2"]')).toContainText("Offer 2 of 2");
  // The target by its readable name, the full id on hover.
  await expect(listRow(page, sid).getByTestId("row-people").locator(`[data-actor-id="${carol.id}"]`)).toHaveAttribute("title", carol.id);

  await carol.acceptHandoff(sid, "h2", "I have the pager");
  await expectRowPhase(page, sid, "Accepted", "Accepted");
  await expectSessionPhase(session, "Accepted", "Accepted");

  await alice.commit(sid, HANDOFF_MODE, "handoff.accepted", true, "carol owns payments-api on-call");
  await expectRowPhase(page, sid, "Committed", "Committed");
  await expectSessionPhase(session, "Committed", "Committed");
  // One pill says it all: lifecycle (resolved) and phase (committed) merged.
  await expect(listRow(page, sid).locator("[data-badge]")).toHaveCount(1);
  const commitment = session.getByTestId("commitment");
  await expect(commitment).toHaveAttribute("data-outcome", "positive");
  await expect(commitment).toContainText("handoff.accepted");
  await expect(commitment).toContainText("carol owns payments-api on-call");
  await expect(session.getByTestId("session-badges")).toHaveAttribute("data-status", "committed");
  await expect(session.getByTestId("session-badges").locator("[data-badge]")).toHaveCount(1);
  // The announcer spoke the last phase change.
  await expect(session.getByTestId("announcer")).toContainText("committed");

  // Nothing from any payload ran or was inserted.
  expect(await session.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await session.locator("main script").count()).toBe(0);
  expect(await session.locator("img[onerror], main iframe, main img").count()).toBe(0);
  expect(await session.locator('a[href^="javascript:"]').count()).toBe(0);
  await hostile.getByText("click me").click();
  await hostile.getByText("also me").click();
  expect(await session.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();

  // The raw envelope view shows the decoded payload with defaults.
  await session.keyboard.press("End");
  const commitRow = session.locator('[data-sequence="10"]');
  await expect(commitRow).toBeFocused();
  await commitRow.getByText("Raw envelope").click();
  await expect(commitRow.getByTestId("raw-envelope")).toContainText("macp.v1.CommitmentPayload");
  await expect(commitRow.getByTestId("raw-envelope")).toContainText('"outcome_positive"');

  // Groups: offer h1 with its three contexts, decline and late context; then h2.
  expect(await timelineSequences(session)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(await timelineOrder(session)).toEqual(["1", "h1", "2", "3", "4", "5", "6", "7", "h2", "8", "9", "10"]);

  // Transcript export: NDJSON in sequence order, canonical field names.
  const [download] = await Promise.all([session.waitForEvent("download"), session.getByTestId("export-ndjson").click()]);
  expect(download.suggestedFilename()).toBe(`session-${sid}.ndjson`);
  const lines = fs
    .readFileSync(await download.path(), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { sequence: number; message_type: string; payload?: Record<string, unknown> });
  expect(lines.map((l) => l.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(lines.map((l) => l.message_type)).toEqual([
    "SessionStart",
    "HandoffOffer",
    "HandoffContext",
    "HandoffContext",
    "HandoffContext",
    "HandoffDecline",
    "HandoffContext",
    "HandoffOffer",
    "HandoffAccept",
    "Commitment",
  ]);
  expect(lines[9]?.payload?.outcome_positive).toBe(true);
  expect([...errors, ...sessionErrors]).toEqual([]);
});

test("deep links open a session at an event, and the newest event is one keystroke away", async ({ page }) => {
  const alice = new Agent("agent://dba/alice");
  const bob = new Agent("agent://dba/bob");
  const sid = newSessionId();
  await alice.start(sid, HANDOFF_MODE, `E2E deep link ${uniqueSuffix()}`, [alice.id, bob.id]);
  await alice.offer(sid, "h1", bob.id, "orders-pg", "rotation");
  for (let i = 0; i < 30; i += 1) await alice.context(sid, "h1", "text/plain", `note ${i + 1}`);
  await bob.acceptHandoff(sid, "h1", "ok");

  await page.goto(`/sessions/${sid}?event=12`);
  const target = page.locator("#e-12");
  await expect(target).toBeFocused();
  await expect(target).toContainText("Linked");
  await expect(target).toContainText("note 10");

  await page.goto(`/sessions/${sid}#e-5`);
  await expect(page.locator("#e-5")).toBeFocused();

  // One key to the newest event (#33, the accept), from anywhere on the page.
  await page.locator("body").click({ position: { x: 5, y: 300 } });
  await page.keyboard.press("End");
  await expect(page.locator("#e-33")).toBeFocused();
  // Sentences name people, not offer ids (issue 12).
  await expect(page.locator("#e-33")).toContainText("dba/bob accepted the offer");
  await page.keyboard.press("k");
  await expect(page.locator("#e-32")).toBeFocused();
  await page.keyboard.press("Home");
  await expect(page.locator("#e-1")).toBeFocused();
  await page.getByTestId("jump-latest").click();
  await expect(page.locator("#e-33")).toBeFocused();

  // A sequence that does not exist says so.
  await page.goto(`/sessions/${sid}?event=999`);
  await expect(page.getByText("Event #999 is not in this session")).toBeVisible();
  // A malformed id is rejected before anything is fetched.
  await page.goto(`/sessions/${encodeURIComponent("<script>")}`);
  await expect(page.getByRole("heading", { name: "Not a session id" })).toBeVisible();
});
