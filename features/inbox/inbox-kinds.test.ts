import { describe, expect, it } from "vitest";
import { InboxItemKind } from "@/lib/gen/baton/v1/actions_pb";
import { INBOX_ITEM_KIND } from "@/features/inbox/inbox-kinds";

describe("INBOX_ITEM_KIND", () => {
  it("holds exactly the generated InboxItemKind's names and values", () => {
    const generated = Object.fromEntries(Object.entries(InboxItemKind).filter(([k]) => Number.isNaN(Number(k))));
    expect({ ...INBOX_ITEM_KIND }).toEqual(generated);
  });
});
