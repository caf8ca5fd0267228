import { describe, expect, it } from "vitest";
import { isTyping, shortcutFor, SHORTCUTS } from "@/features/shell/shortcuts";

const key = (k: string, mods: Partial<{ altKey: boolean; ctrlKey: boolean; metaKey: boolean }> = {}) => ({
  key: k,
  altKey: false,
  ctrlKey: false,
  metaKey: false,
  ...mods,
});
const focus = (tag: string, extra: Partial<{ editable: boolean; inputType: string; inDialog: boolean }> = {}) => ({
  tag,
  editable: false,
  inputType: "",
  inDialog: false,
  ...extra,
});

describe("shortcutFor", () => {
  it("leaves a text field on Escape, but not a dialog's (the dialog closes itself)", () => {
    expect(shortcutFor(key("Escape"), focus("INPUT", { inputType: "search" }))).toBe("leave-field");
    expect(shortcutFor(key("Escape"), focus("TEXTAREA"))).toBe("leave-field");
    expect(shortcutFor(key("Escape"), focus("INPUT", { inputType: "text", inDialog: true }))).toBeNull();
    expect(shortcutFor(key("Escape"), focus("ARTICLE"))).toBeNull();
  });

  it("goes to the search box on / from anywhere but a text field, a focused row included", () => {
    expect(shortcutFor(key("/"), focus("ARTICLE"))).toBe("search");
    expect(shortcutFor(key("/"), focus("BODY"))).toBe("search");
    expect(shortcutFor(key("/"), focus("A"))).toBe("search");
    expect(shortcutFor(key("/"), focus("INPUT", { inputType: "checkbox" }))).toBe("search");
    expect(shortcutFor(key("/"), focus("INPUT", { inputType: "search" }))).toBeNull();
    expect(shortcutFor(key("/"), focus("DIV", { editable: true }))).toBeNull();
    expect(shortcutFor(key("/", { ctrlKey: true }), focus("BODY"))).toBeNull();
  });

  it("opens the list of shortcuts on ?", () => {
    expect(shortcutFor(key("?"), focus("BODY"))).toBe("help");
    expect(shortcutFor(key("?"), focus("TEXTAREA"))).toBeNull();
    expect(shortcutFor(key("?"), focus("BUTTON", { inDialog: true }))).toBeNull();
    expect(SHORTCUTS.map((s) => s.keys.join(" "))).toEqual(expect.arrayContaining(["/", "Esc", "Enter", "?"]));
  });

  it("knows which focus takes text", () => {
    expect(isTyping(focus("SELECT"))).toBe(true);
    expect(isTyping(focus("INPUT", { inputType: "radio" }))).toBe(false);
    expect(isTyping(focus("BUTTON"))).toBe(false);
  });
});
