import { expect, test } from "../support/fixtures";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { listLive, listRow, uniqueSuffix } from "../support/ui";
import { connectJson, csrfTokenOf, signedInAs } from "../support/session-ui";

test("filters and sort live in the URL; back and forward walk through them; the keyboard drives the list", async ({ page }) => {
  const tag = uniqueSuffix();
  const alice = new Agent("agent://list/alice");
  const bob = new Agent("agent://list/bob");
  const dora = new Agent(`agent://list/dora-${tag}`);
  const handoff = newSessionId();
  const task = newSessionId();
  await alice.start(handoff, HANDOFF_MODE, `E2E list handoff ${tag}`, [alice.id, bob.id]);
  await alice.offer(handoff, "h1", bob.id, "pager", "rotation");
  await alice.start(task, TASK_MODE, `E2E list task ${tag}`, [alice.id, dora.id]);

  // Deep link straight into a filtered view.
  await page.goto(`/?q=${tag}&mode=task`);
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toHaveCount(0);
  await expect(page.getByTestId("filter-mode")).toHaveValue("task");
  await expect(page.getByTestId("filter-q")).toHaveValue(tag);
  await listLive(page);

  // Changing a select pushes a history entry.
  await page.getByTestId("filter-mode").selectOption("handoff");
  await expect(page).toHaveURL(new RegExp(`\\?mode=handoff&q=${tag}$`));
  await expect(listRow(page, handoff)).toBeVisible();
  await expect(listRow(page, task)).toHaveCount(0);
  await page.getByTestId("filter-phase").selectOption("OfferPending");
  await expect(page).toHaveURL(/phase=OfferPending/);

  await page.goBack();
  await expect(page).not.toHaveURL(/phase=/);
  await expect(page.getByTestId("filter-phase")).toHaveValue("");
  await page.goBack();
  await expect(page).toHaveURL(/mode=task/);
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toHaveCount(0);
  await page.goForward();
  await expect(listRow(page, handoff)).toBeVisible();

  // Participant filter and free text (debounced, replaces the entry).
  await page.getByTestId("filter-mode").selectOption("");
  await page.getByTestId("filter-participant").fill(`dora-${tag}`);
  await expect(page).toHaveURL(new RegExp(`participant=agent%3A%2F%2Flist%2Fdora-${tag}|participant=dora-${tag}`));
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toHaveCount(0);
  await page.getByTestId("clear-filters").click();
  await expect(page).toHaveURL(/\/$/);

  // Invalid values in the URL are ignored, not trusted.
  await page.goto(`/?mode=evil&phase=__proto__&sort=nope&q=${tag}`);
  await expect(page.getByTestId("filter-mode")).toHaveValue("");
  await expect(listRow(page, task)).toBeVisible();
  await expect(listRow(page, handoff)).toBeVisible();
  await listLive(page);

  // Sort by intent ascending: handoff before task.
  await page.getByTestId("sort").selectOption("intent");
  await expect(page).toHaveURL(/sort=intent/);
  // Sorted on the server: wait for the new order rather than reading the rows at once.
  await expect
    .poll(() => page.locator("[data-row-id]").evaluateAll((els) => els.map((e) => e.getAttribute("data-row-id"))))
    .toEqual([handoff, task]);

  // Keyboard: j/k move the selection, Enter opens.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("j");
  await expect(listRow(page, handoff)).toBeFocused();
  await page.keyboard.press("j");
  await expect(listRow(page, task)).toBeFocused();
  await page.keyboard.press("k");
  await expect(listRow(page, handoff)).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(listRow(page, task)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/sessions/${task}$`));
  await expect(page.getByTestId("session-intent")).toHaveText(`E2E list task ${tag}`);
  await page.goBack();
  await expect(page).toHaveURL(/sort=intent/);

  // "/sessions" is an alias that keeps the filters.
  await page.goto(`/sessions?mode=task&q=${tag}`);
  await expect(page).toHaveURL(new RegExp(`/\\?mode=task&q=${tag}$`));
  await expect(listRow(page, task)).toBeVisible();
  await expect(page.getByRole("link", { name: "Sessions", exact: true })).toHaveAttribute("aria-current", "page");

  // "/" jumps to search.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("/");
  await expect(page.getByTestId("filter-q")).toBeFocused();
});

test("one status pill, From → To by name, and an offer left unanswered past the threshold shows as stuck and is found by ?stuck=1", async ({
  page,
  browser,
}) => {
  const tag = uniqueSuffix();
  // Alice (an operator) starts two handoffs through the console: one offered to Bob and left unanswered, one never offered.
  const alice = await signedInAs(browser, "alice");
  const csrf = await csrfTokenOf(alice.context.request);
  const call = async (method: string, body: Record<string, unknown>): Promise<{ sessionId: string }> => {
    const res = await connectJson(
      alice.context.request,
      method,
      { messageId: globalThis.crypto.randomUUID(), ...body },
      { "x-baton-csrf": csrf },
    );
    expect(res.status(), `${method}: ${await res.text()}`).toBe(200);
    return (await res.json()) as { sessionId: string };
  };
  const waiting = (
    await call("StartSession", {
      kind: "SESSION_KIND_HANDOFF",
      intent: `E2E stuck offer ${tag}`,
      scope: "payments-api primary",
      participants: ["human:bob"],
    })
  ).sessionId;
  await call("Offer", { sessionId: waiting, target: "human:bob", reason: "rotation" });
  const quiet = (
    await call("StartSession", { kind: "SESSION_KIND_HANDOFF", intent: `E2E never offered ${tag}`, participants: ["human:bob"] })
  ).sessionId;

  // The e2e console runs with BATON_STUCK_AFTER_MINUTES=0.05 (3 s): wait past it.
  await page.waitForTimeout(3_500);
  await page.goto(`/?q=${tag}`);
  const row = listRow(page, waiting);
  await expect(row).toBeVisible();
  // One pill: lifecycle (open) and phase (offered) merged; no separate state pill.
  await expect(row.locator("[data-badge]")).toHaveCount(1);
  await expect(row.locator("[data-badge]")).toHaveText("Status: Offered");
  // People by name, the full id on hover.
  await expect(row.getByTestId("row-people")).toHaveText(/^Alice Ng \(person\)\s*→\s*to Bob Ito \(person\)$/);
  await expect(row.getByTestId("row-people").locator('[data-actor-id="human:bob"]')).toHaveAttribute("title", "human:bob");
  await expect(row.getByTestId("row-waiting-on")).toHaveText("Bob Ito (person)");
  // Stuck: marked with an icon and words, not colour alone.
  await expect(row).toHaveAttribute("data-stuck", "");
  await expect(row.getByTestId("row-stuck")).toHaveText(/^Stuck (<1|\d+) min$/);
  await expect(listRow(page, quiet)).toBeVisible();
  await expect(listRow(page, quiet)).not.toHaveAttribute("data-stuck", "");
  await expect(listRow(page, quiet).locator("[data-badge]")).toHaveText("Status: Started");

  // The "Stuck" filter lives in the URL and is run by the server.
  await listLive(page);
  await page.getByTestId("filter-stuck").click();
  await expect(page).toHaveURL(new RegExp(`\\?q=${tag}&stuck=1$`));
  await expect(page.getByTestId("filter-stuck")).toHaveAttribute("aria-pressed", "true");
  await expect(listRow(page, waiting)).toBeVisible();
  await expect(listRow(page, quiet)).toHaveCount(0);
  await page.goto(`/?stuck=1&q=${tag}`);
  await expect(listRow(page, waiting)).toBeVisible();
  await expect(listRow(page, quiet)).toHaveCount(0);
  await expect(page.getByTestId("list-count")).toContainText("1 of");

  // Bob answers: the session is no longer stuck and leaves the stuck list by itself.
  const bob = await signedInAs(browser, "bob");
  await bob.page.goto(`/sessions/${waiting}`);
  await bob.page.getByTestId("action-panel").getByTestId("action-accept").click();
  await bob.page.getByTestId("accept-form").getByLabel("Reason").fill("on it");
  await bob.page.getByTestId("accept-form-submit").click();
  await expect(listRow(page, waiting)).toHaveCount(0);

  // The viewer this suite signs in as (Wendy) is never offered "Waiting on me"; an operator is.
  await expect(page.getByTestId("filter-waiting")).toHaveCount(0);
  await alice.page.goto("/");
  await expect(alice.page.getByTestId("filter-waiting")).toBeVisible();
  // Leave nothing waiting on Alice (the accepted offer awaits her commit): later specs count her inbox exactly.
  for (const sessionId of [waiting, quiet]) await call("Cancel", { sessionId, reason: "e2e clean-up" });
  await alice.context.close();
  await bob.context.close();
});

test("the rows come shown as the HTML is parsed (not in a hidden streamed copy revealed later), and stay once the list is live", async ({
  page,
}) => {
  const tag = uniqueSuffix();
  const alice = new Agent(`agent://list/alice-${tag}`);
  const bob = new Agent("agent://list/bob");
  // Three rows: more HTML than React streams in the shell when they sit in a Suspense boundary.
  const ids = [newSessionId(), newSessionId(), newSessionId()];
  for (const [i, id] of ids.entries()) await alice.start(id, HANDOFF_MODE, `E2E list in place ${tag} ${i}`, [alice.id, bob.id]);
  // Each row element as the HTML parser first put it in the page (before any script ran), and whether it was shown then.
  await page.addInitScript(() => {
    const seen = new Map<string, { el: Element; hidden: boolean }>();
    (window as unknown as { __parsedRows: typeof seen }).__parsedRows = seen;
    new MutationObserver(() => {
      for (const el of document.querySelectorAll("[data-row-id]")) {
        const id = el.getAttribute("data-row-id") ?? "";
        if (!seen.has(id)) seen.set(id, { el, hidden: el.closest("[hidden]") !== null });
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(`/?q=${tag}`);
  for (const id of ids) await expect(listRow(page, id)).toBeVisible();
  await listLive(page);
  const rows = await page.evaluate((sessionIds) => {
    const parsed = (window as unknown as { __parsedRows: Map<string, { el: Element; hidden: boolean }> }).__parsedRows;
    return sessionIds.map((id) => {
      const first = parsed.get(id);
      return {
        parsed: first !== undefined,
        hiddenWhenParsed: first?.hidden,
      };
    });
  }, ids);
  expect(rows).toEqual(ids.map(() => ({ parsed: true, hiddenWhenParsed: false })));
  for (const id of ids) await expect(listRow(page, id)).toBeVisible();
});

test("a row pressed in the first view while the live list comes in still opens: the swap waits for the click", async ({ page }) => {
  const tag = uniqueSuffix();
  const alice = new Agent(`agent://list/alice-${tag}`);
  const bob = new Agent("agent://list/bob");
  const id = newSessionId();
  await alice.start(id, HANDOFF_MODE, `E2E press during the swap ${tag}`, [alice.id, bob.id]);
  const url = `/?q=${tag}`;
  // The scripts the page's HTML names load as usual; the code asked for after them (the live
  // list's) is held until the row is pressed.
  const html = await (await page.request.get(url)).text();
  const named = new Set(html.match(/\/_next\/static\/[^"'\s]+\.js/g) ?? []);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const heldUrls: string[] = [];
  await page.route("**/_next/static/**/*.js", async (route) => {
    if (named.has(new URL(route.request().url()).pathname)) return route.continue();
    heldUrls.push(route.request().url());
    await released;
    await route.continue();
  });
  await page.goto(url);
  const row = listRow(page, id);
  await expect(row).toBeVisible();
  await expect(page.locator("[data-list-preview]")).toBeVisible();
  await expect.poll(() => heldUrls.length).toBeGreaterThan(0);
  // The press begins on the first view's row; the live list's code comes in while it is held down.
  const box = await row.boundingBox();
  if (!box) throw new Error("the row has no box");
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  release();
  // The held code is in the page (a script runs as it arrives), then a few frames: had the swap
  // not waited for the click, the live list would have taken over by then.
  await expect.poll(() => page.evaluate((urls) => urls.every((u) => performance.getEntriesByName(u).length > 0), heldUrls)).toBe(true);
  await page.evaluate(
    () => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 100)))),
  );
  await expect(page.locator("[data-list-preview]")).toBeVisible();
  await page.mouse.up();
  await expect(page).toHaveURL(new RegExp(`/sessions/${id}$`));
  await expect(page.getByTestId("session-badges")).toBeVisible();
});
