// @vitest-environment happy-dom
// The list's first view hands what was typed, picked or focused there to the
// live list: only what was changed (a first view drawn for an older query
// must not undo the URL's), and the focus by test id or row.

import { afterEach, describe, expect, it } from "vitest";
import { carryOver, restoreFocus } from "@/features/sessions-list/carry-over";

function firstView(): HTMLElement {
  document.body.innerHTML = `
    <div data-list-preview="true">
      <form>
        <input type="search" data-testid="filter-q" value="alpha">
        <input type="text" data-testid="filter-participant" value="">
        <select data-testid="filter-mode"><option value="">All</option><option value="task" selected>Task</option></select>
        <select data-testid="sort"><option value="activity" selected>Last activity</option><option value="intent">Intent</option></select>
      </form>
      <ol><li><a href="/sessions/s1" data-row-id="s1">one</a></li></ol>
    </div>`;
  return document.querySelector<HTMLElement>("[data-list-preview]")!;
}

afterEach(() => {
  document.body.innerHTML = "";
});

describe("carryOver", () => {
  it("carries nothing that was not changed, and no focus outside the first view", () => {
    const root = firstView();
    expect(carryOver(root, document.body)).toEqual({ filters: {}, focus: undefined });
  });

  it("carries changed text and picks, and the focused field with its selection", () => {
    const root = firstView();
    const q = root.querySelector<HTMLInputElement>('[data-testid="filter-q"]')!;
    q.value = "alphabet";
    q.focus();
    q.setSelectionRange(3, 5);
    root.querySelector<HTMLSelectElement>('[data-testid="sort"]')!.value = "intent";
    root.querySelector<HTMLSelectElement>('[data-testid="filter-mode"]')!.value = "";
    const carried = carryOver(root, document.activeElement);
    expect(carried?.filters).toEqual({ "filter-q": "alphabet", sort: "intent", "filter-mode": "" });
    expect(carried?.focus).toEqual({ testId: "filter-q", selection: [3, 5] });
  });

  it("carries a focused row by its session id", () => {
    const root = firstView();
    const row = root.querySelector<HTMLElement>("[data-row-id]")!;
    row.focus();
    expect(carryOver(root, document.activeElement)?.focus).toEqual({ rowId: "s1" });
  });

  it("reads nothing without a first view", () => {
    expect(carryOver(null, null)).toBeUndefined();
  });
});

describe("restoreFocus", () => {
  it("focuses the live element with the same test id and puts the selection back", () => {
    document.body.innerHTML = `<input type="search" data-testid="filter-q" value="alphabet">`;
    restoreFocus(document, { testId: "filter-q", selection: [1, 4] });
    const q = document.querySelector<HTMLInputElement>('[data-testid="filter-q"]')!;
    expect(document.activeElement).toBe(q);
    expect([q.selectionStart, q.selectionEnd]).toEqual([1, 4]);
  });

  it("focuses the live row of the same session; nothing when it is gone", () => {
    document.body.innerHTML = `<a href="/sessions/s2" data-row-id="s2">two</a>`;
    restoreFocus(document, { rowId: "s1" });
    expect(document.activeElement).toBe(document.body);
    restoreFocus(document, { rowId: "s2" });
    expect(document.activeElement).toBe(document.querySelector("[data-row-id]"));
  });
});
