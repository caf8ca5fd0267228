// Page helpers shared by the e2e specs.

import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page } from "@playwright/test";

export const ARTIFACTS = path.join(process.cwd(), "e2e-artifacts");

export async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // No fixed wait: a screenshot waits for the page's fonts and draws a new frame. No animations in
  // screenshots: Playwright finishes transitions (a colour scheme's change) and stops infinite ones.
  // A full-page shot from the top, so the sticky header is where it belongs.
  if (fullPage) await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage, animations: "disabled" });
}

export const SCHEMES = ["light", "dark"] as const;
export type Scheme = (typeof SCHEMES)[number];

/**
 * Runs `check` in light and then in dark mode on the page as it is, without a reload: while its
 * theme is "system" the console follows the system's colour scheme live (features/shell/Providers.tsx),
 * so one page load serves both modes' screenshots and axe checks. Motion is reduced throughout.
 */
export async function inEachScheme(page: Page, check: (scheme: Scheme) => Promise<void>): Promise<void> {
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
    if (scheme === "dark") await expect(page.locator("html")).toHaveClass(/\bdark\b/);
    else await expect(page.locator("html")).not.toHaveClass(/\bdark\b/);
    await check(scheme);
  }
}

/** The widths of the visual checks: a desktop, then a phone. */
export const WIDTHS = [1440, 390] as const;

/** The window of the visual checks at `width`: 900 px high on a desktop, 844 on a phone (390 px). */
export function viewportAt(width: number): { width: number; height: number } {
  return { width, height: width === 390 ? 844 : 900 };
}

/** A screenshot's mode suffix at `width`: "dark" on a desktop, "dark-390" on a phone. */
export function modeSuffix(width: number, scheme: Scheme): string {
  return width === 390 ? `${scheme}-390` : scheme;
}

/**
 * Sets the page to each width of the visual checks in turn (1440, then 390 px), with reduced
 * motion, and runs `check` there with the screenshot suffix of a mode at that width.
 */
export async function atEachWidth(page: Page, check: (width: number, suffix: (scheme: Scheme) => string) => Promise<void>): Promise<void> {
  await page.emulateMedia({ reducedMotion: "reduce" });
  for (const width of WIDTHS) {
    await page.setViewportSize(viewportAt(width));
    await check(width, (scheme) => modeSuffix(width, scheme));
  }
}

/** The header's connection badge says the page's streams are live (or ended for good): not connecting or reconnecting. */
export async function connectionSettled(page: Page): Promise<void> {
  await expect(page.getByTestId("site-connection").locator("[data-connection]")).toHaveAttribute("data-connection", /live|ended/);
}

export function listRow(page: Page, sessionId: string): Locator {
  return page.locator(`[data-row-id="${sessionId}"]`);
}

/**
 * The list page has hydrated and its live stream is up. Its first rows are
 * server-rendered, so a visible row does not mean the filters work yet: a
 * select changed before hydration is set back by React.
 */
export async function listLive(page: Page, timeout?: number): Promise<void> {
  await expect(page.locator('[data-connection="live"]').first()).toBeVisible(timeout ? { timeout } : undefined);
}

/** A list row shows this phase (the attribute is the projection phase, the text its label). */
export async function expectRowPhase(page: Page, sessionId: string, phase: string, label: string): Promise<void> {
  const row = listRow(page, sessionId);
  await expect(row).toHaveAttribute("data-phase", phase);
  await expect(row).toContainText(label);
}

/** The session page header shows this phase. */
export async function expectSessionPhase(page: Page, phase: string, label: string): Promise<void> {
  const badges = page.getByTestId("session-badges");
  await expect(badges).toHaveAttribute("data-phase", phase);
  await expect(badges).toContainText(label);
}

/**
 * The whole timeline in display order, collected by scrolling through the
 * virtualized list: handoff group ids ("h1") and event sequences ("3").
 */
export async function timelineOrder(page: Page): Promise<string[]> {
  return scanTimeline(page, "order");
}

/** The event types (`data-type`) of the whole timeline, in order, scrolling through it as timelineOrder does. */
export async function timelineEventTypes(page: Page): Promise<string[]> {
  return (await scanTimeline(page, "type")).filter((t) => t !== "");
}

/**
 * Scrolls through the virtualized timeline from the top (it draws only the
 * rows in view and a few more) and collects each row once, by its index:
 * "order" gives a group's name or an event's sequence, "type" an event's type.
 */
async function scanTimeline(page: Page, what: "order" | "type"): Promise<string[]> {
  const seen = new Map<number, string>();
  await page.evaluate(() => window.scrollTo(0, 0));
  for (let i = 0; i < 200; i += 1) {
    await page.waitForTimeout(60);
    const items = await page
      .locator('[data-testid="timeline"] > [data-index]')
      .evaluateAll(
        (els, w) =>
          els.map((e): [number, string] => [
            Number(e.getAttribute("data-index")),
            w === "type"
              ? (e.querySelector("[data-type]")?.getAttribute("data-type") ?? "")
              : (e.querySelector("[data-group]")?.getAttribute("data-group") ??
                e.querySelector("[data-sequence]")?.getAttribute("data-sequence") ??
                ""),
          ]),
        what,
      );
    for (const [index, label] of items) seen.set(index, label);
    const moved = await page.evaluate(() => {
      const before = window.scrollY;
      window.scrollBy(0, Math.round(window.innerHeight * 0.7));
      return window.scrollY !== before;
    });
    if (!moved) break;
  }
  return [...seen.entries()].sort((a, b) => a[0] - b[0]).map(([, label]) => label);
}

/** Every event sequence in the timeline, in display order. */
export async function timelineSequences(page: Page): Promise<number[]> {
  return (await timelineOrder(page)).filter((l) => /^\d+$/.test(l)).map(Number);
}

/** The WCAG 2.1 A and AA rules, with every node of every violation; passes and incomplete checks are not collected (one node each), which makes a run about a tenth cheaper. */
const AXE_OPTIONS = {
  runOnly: { type: "tag" as const, values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
  resultTypes: ["violations" as const],
};

/**
 * Runs axe on the page as it is and expects no violation. In axe's "legacy" mode: `axe.run` in
 * the page itself. The default runs `axe.runPartial` in each frame and then `axe.finishRun` in a
 * new blank tab that gets a second copy of axe, so that results can be gathered across frames of
 * other origins. The console's pages have no frames, and there the blank tab made each check about
 * 70% slower (the two visual specs' 30 checks took 51.7 s instead of 30.5 s, 2026-11-27, 2 cores);
 * a page with frames gets the default.
 */
export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page })
    .options(AXE_OPTIONS)
    .setLegacyMode(page.frames().length === 1)
    .analyze();
  const summary = results.violations.map(
    (v) =>
      `${v.id} (${v.impact ?? "?"}): ${v.help}\n  ${v.nodes
        .slice(0, 5)
        .map((n) => n.target.join(" "))
        .join("\n  ")}`,
  );
  expect(summary, `axe violations on ${label}`).toEqual([]);
}

export function uniqueSuffix(): string {
  return Math.random().toString(36).slice(2, 8);
}

/** Collect uncaught errors and console errors of a page (hydration problems, React warnings). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const text = m.text();
    // Expected while a test deliberately cuts the network.
    if (/Failed to load resource|net::ERR_|ERR_INTERNET_DISCONNECTED|ERR_CONNECTION/.test(text)) return;
    errors.push(`console.error: ${text}`);
  });
  return errors;
}
