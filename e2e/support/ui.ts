// Page helpers shared by the e2e specs.

import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page } from "@playwright/test";

export const ARTIFACTS = path.join(process.cwd(), "e2e-artifacts");

export async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // Let countdowns and fonts settle; no animations in screenshots.
  await page.waitForTimeout(200);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage, animations: "disabled" });
}

export function listRow(page: Page, sessionId: string): Locator {
  return page.locator(`[data-row-id="${sessionId}"]`);
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

/** Sequences of the timeline's rendered events, in DOM order. */
export async function renderedSequences(page: Page): Promise<number[]> {
  return page.locator("[data-sequence]").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-sequence"))));
}

export async function expectNoAxeViolations(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const summary = results.violations.map(
    (v) => `${v.id} (${v.impact ?? "?"}): ${v.help}\n  ${v.nodes.slice(0, 5).map((n) => n.target.join(" ")).join("\n  ")}`,
  );
  expect(summary, `axe violations on ${label}`).toEqual([]);
}

export function uniqueSuffix(): string {
  return Math.random().toString(36).slice(2, 8);
}
