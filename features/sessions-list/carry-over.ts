// What someone did in the session list's server-drawn first view
// (ListPreview.tsx) before the live list took over (LiveSessionList.tsx): the
// filter bar's values and where the focus was. The live list replaces those
// elements, so it reads this from the first view just before and applies it
// once it is in place: what was typed is not lost, the focus stays put.

/** The filter bar's controls whose values are carried over, by test id. */
const CONTROLS = ["filter-q", "filter-participant", "filter-mode", "filter-state", "filter-phase", "sort"] as const;

export interface CarriedFocus {
  /** The focused control's test id, or the focused row's session id. */
  testId?: string;
  rowId?: string;
  /** A text field's selection. */
  selection?: readonly [number, number];
}

export interface CarriedState {
  /** The value of each control changed in the first view, by test id. */
  filters: Readonly<Record<string, string>>;
  focus: CarriedFocus | undefined;
}

/** What the control showed as drawn (its default), before anyone changed it. */
function initialValue(el: HTMLInputElement | HTMLSelectElement): string {
  if (el instanceof HTMLSelectElement) {
    const options = Array.from(el.options);
    // The `selected` attribute is what `defaultSelected` reflects.
    return (options.find((o) => o.hasAttribute("selected")) ?? options[0])?.value ?? "";
  }
  return el.defaultValue;
}

/** Reads the first view's state under `root` (the element marked data-list-preview); none without one. */
export function carryOver(root: Element | null, active: Element | null): CarriedState | undefined {
  if (!root) return undefined;
  const filters: Record<string, string> = {};
  for (const id of CONTROLS) {
    const el = root.querySelector<HTMLInputElement | HTMLSelectElement>(`[data-testid="${id}"]`);
    // Only what was changed there: a first view drawn for an older query
    // (back to a list whose filters changed since) must not undo the URL's.
    if (el && el.value !== initialValue(el)) filters[id] = el.value;
  }
  let focus: CarriedFocus | undefined;
  if (active && root.contains(active)) {
    const testId = active.getAttribute("data-testid");
    const rowId = active.getAttribute("data-row-id");
    if (testId) {
      const input = active as HTMLInputElement;
      const selection =
        typeof input.selectionStart === "number" && typeof input.selectionEnd === "number"
          ? ([input.selectionStart, input.selectionEnd] as const)
          : undefined;
      focus = { testId, ...(selection ? { selection } : {}) };
    } else if (rowId !== null) focus = { rowId };
  }
  return { filters, focus };
}

/** Puts the focus back on the live list's element that matches `focus` (under `root`). */
export function restoreFocus(root: ParentNode, focus: CarriedFocus | undefined): void {
  if (!focus) return;
  const selector = focus.testId
    ? `[data-testid="${CSS.escape(focus.testId)}"]`
    : focus.rowId !== undefined
      ? `[data-row-id="${CSS.escape(focus.rowId)}"]`
      : null;
  const el = selector ? root.querySelector<HTMLElement>(selector) : null;
  if (!el) return;
  el.focus({ preventScroll: true });
  if (focus.selection && el instanceof HTMLInputElement) {
    try {
      el.setSelectionRange(focus.selection[0], focus.selection[1]);
    } catch {
      // Not a text field with a selection (e.g. a select): focus is enough.
    }
  }
}
