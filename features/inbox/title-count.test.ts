import { describe, expect, it } from "vitest";
import { titleWithCount } from "@/features/inbox/title-count";

describe("titleWithCount", () => {
  it("puts the count first, replaces an old one, and removes it at zero", () => {
    expect(titleWithCount("Sessions · Baton", 3)).toBe("(3) Sessions · Baton");
    expect(titleWithCount("(3) Sessions · Baton", 4)).toBe("(4) Sessions · Baton");
    expect(titleWithCount("(99+) Inbox · Baton", 0)).toBe("Inbox · Baton");
    expect(titleWithCount("Inbox · Baton", 120)).toBe("(99+) Inbox · Baton");
    // A title that merely starts with a parenthesis is left alone.
    expect(titleWithCount("(draft) notes", 0)).toBe("(draft) notes");
  });
});
