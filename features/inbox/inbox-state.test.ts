import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InboxItemKind, InboxItemSchema, WatchInboxResponseSchema, type InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { INITIAL_INBOX, applyInboxMessage, inboxCountLabel, inboxKey } from "@/features/inbox/inbox-state";

type ItemFields = Partial<Pick<InboxItem, "kind" | "sessionId" | "subjectId" | "sinceUnixMs">>;

function update(items: ItemFields[]) {
  return create(WatchInboxResponseSchema, {
    item: {
      case: "update",
      value: {
        items: items.map((i) =>
          create(InboxItemSchema, { kind: InboxItemKind.OFFER, sessionId: "s", subjectId: "h1", sinceUnixMs: 1n, ...i }),
        ),
        count: items.length,
      },
    },
  });
}

describe("inbox fold", () => {
  it("replaces the inbox on every update, newest first, and spots new items after the first update", () => {
    let s = applyInboxMessage(
      INITIAL_INBOX,
      update([
        { sessionId: "a", sinceUnixMs: 1n },
        { sessionId: "b", sinceUnixMs: 5n },
      ]),
    );
    expect(s.loaded).toBe(true);
    expect(s.items.map((i) => i.sessionId)).toEqual(["b", "a"]);
    // What was there when the page opened is not "new".
    expect(s.fresh).toEqual([]);
    s = applyInboxMessage(
      s,
      update([{ sessionId: "a" }, { sessionId: "b" }, { sessionId: "c", kind: InboxItemKind.APPROVAL, sinceUnixMs: 9n }]),
    );
    expect(s.fresh.map((i) => i.sessionId)).toEqual(["c"]);
    // An item that left and came back is not announced twice.
    s = applyInboxMessage(s, update([{ sessionId: "a" }]));
    s = applyInboxMessage(s, update([{ sessionId: "a" }, { sessionId: "c", kind: InboxItemKind.APPROVAL }]));
    expect(s.fresh).toEqual([]);
    expect(s.items).toHaveLength(2);
    const heartbeat = create(WatchInboxResponseSchema, { item: { case: "heartbeat", value: { serverTimeUnixMs: 1n } } });
    expect(applyInboxMessage(s, heartbeat)).toBe(s);
  });

  it("keeps approvals ahead apart from what waits now, and announces a new one once", () => {
    const withAhead = (ahead: ItemFields[]) => {
      const m = update([{ sessionId: "a" }]);
      if (m.item.case === "update")
        m.item.value.ahead = ahead.map((i) =>
          create(InboxItemSchema, { kind: InboxItemKind.APPROVAL_AHEAD, sessionId: "s", subjectId: "h1", sinceUnixMs: 1n, ...i }),
        );
      return m;
    };
    let s = applyInboxMessage(INITIAL_INBOX, withAhead([]));
    s = applyInboxMessage(s, withAhead([{ sessionId: "x", sinceUnixMs: 3n }]));
    expect(s.items.map((i) => i.sessionId)).toEqual(["a"]);
    expect(s.ahead.map((i) => i.sessionId)).toEqual(["x"]);
    expect(s.fresh.map((i) => i.kind)).toEqual([InboxItemKind.APPROVAL_AHEAD]);
    s = applyInboxMessage(s, withAhead([{ sessionId: "x", sinceUnixMs: 3n }]));
    expect(s.fresh).toEqual([]);
    // When the offer is answered the approval itself is new (another kind): told again.
    s = applyInboxMessage(s, update([{ sessionId: "a" }, { sessionId: "x", kind: InboxItemKind.APPROVAL }]));
    expect(s.ahead).toEqual([]);
    expect(s.fresh.map((i) => [i.sessionId, i.kind])).toEqual([["x", InboxItemKind.APPROVAL]]);
  });

  it("labels", () => {
    const item = update([{ sessionId: "s", subjectId: "h" }]).item;
    expect(item.case === "update" && inboxKey(item.value.items[0] as InboxItem)).toBe(`${InboxItemKind.OFFER}:s:h`);
    expect(inboxCountLabel(0)).toBe("Nothing is waiting on you");
    expect(inboxCountLabel(1)).toBe("1 item waiting on you");
    expect(inboxCountLabel(3)).toBe("3 items waiting on you");
  });

  it("folds the news newest first and spots new news like new items, without counting it", () => {
    const withNews = (news: ItemFields[]) =>
      create(WatchInboxResponseSchema, {
        item: {
          case: "update",
          value: {
            items: [],
            count: 0,
            news: news.map((i) =>
              create(InboxItemSchema, { kind: InboxItemKind.CLOSED, sessionId: "s", subjectId: "s", sinceUnixMs: 1n, ...i }),
            ),
          },
        },
      });
    let s = applyInboxMessage(INITIAL_INBOX, withNews([{ sessionId: "a", subjectId: "a", sinceUnixMs: 1n }]));
    expect(s.fresh).toEqual([]);
    s = applyInboxMessage(
      s,
      withNews([
        { sessionId: "a", subjectId: "a", sinceUnixMs: 1n },
        { sessionId: "b", subjectId: "b", sinceUnixMs: 7n, kind: InboxItemKind.ACCEPTED },
      ]),
    );
    expect(s.news.map((i) => i.sessionId)).toEqual(["b", "a"]);
    expect(s.items).toEqual([]);
    expect(s.fresh.map((i) => i.sessionId)).toEqual(["b"]);
  });
});
