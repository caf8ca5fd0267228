// Page-wide keyboard shortcuts: which key does what, given where focus is.
// Pure, so the rules are unit-tested; features/shell/KeyboardShortcuts.tsx runs them.

export type ShortcutAction = "leave-field" | "search" | "help";

export interface KeyPress {
  key: string;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
}

export interface FocusInfo {
  /** tagName of the focused element ("" for none). */
  tag: string;
  editable: boolean;
  /** type of a focused <input>. */
  inputType: string;
  /** Focus is inside a dialog (which owns its keys, Escape included). */
  inDialog: boolean;
}

const NON_TEXT_INPUTS = new Set(["checkbox", "radio", "button", "submit", "reset", "range", "color", "file", "image"]);

/** Whether keys typed now are text (a text field, a select, or editable content). */
export function isTyping(f: FocusInfo): boolean {
  if (f.editable || f.tag === "TEXTAREA" || f.tag === "SELECT") return true;
  return f.tag === "INPUT" && !NON_TEXT_INPUTS.has(f.inputType);
}

/** What a key press does page-wide, or null (left to the page). */
export function shortcutFor(k: KeyPress, f: FocusInfo): ShortcutAction | null {
  if (k.altKey || k.ctrlKey || k.metaKey) return null;
  if (k.key === "Escape") return isTyping(f) && !f.inDialog ? "leave-field" : null;
  if (isTyping(f) || f.inDialog) return null;
  if (k.key === "/") return "search";
  if (k.key === "?") return "help";
  return null;
}

/** The list the "?" dialog shows. */
export const SHORTCUTS: readonly { keys: readonly string[]; what: string }[] = [
  { keys: ["/"], what: "Search sessions (from any page)" },
  { keys: ["Esc"], what: "Leave a text field, or close a form or dialog" },
  { keys: ["j", "k"], what: "Next / previous row or timeline event" },
  { keys: ["Enter"], what: "Open the session, or expand the focused timeline event" },
  { keys: ["End", "G"], what: "Newest timeline event" },
  { keys: ["Home", "g"], what: "First timeline event" },
  { keys: ["?"], what: "This list" },
];
