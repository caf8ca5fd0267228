// @vitest-environment happy-dom
// Timeline rows as rendered from a folded session (the same fold and row
// model the session page uses): an offer's group header with its status
// badge, and a refused attempt's local annotation.

import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { buildTimeline, type GroupRow, type LocalRefusal } from "@/lib/views/timeline";
import { SID, accept, eventMsg, offer, start } from "@/lib/views/test/fixtures";
import { GroupHeaderView, RefusalNoteView } from "@/features/session/TimelineRowViews";

afterEach(cleanup);

function groups(envs: ReturnType<typeof start>[]): GroupRow[] {
  const s = applySubscribeBatch(
    beginConnection(initialSessionStreamState(SID)),
    envs.map((e, i) => eventMsg(i + 1, e)),
  ).state;
  return buildTimeline(s.view, s.events).rows.filter((r): r is GroupRow => r.kind === "group");
}

const names: Record<string, string> = { alice: "Alice Ng", bob: "Bob Ito", carol: "Carol Diaz" };
const nameOf = (id: string): string => names[id] ?? id;

describe("GroupHeaderView", () => {
  it("names the offer's place, who offers to whom, and its status as a badge", () => {
    const [first, second] = groups([start(), offer("h1", "bob"), offer("h2", "carol"), accept("h2", "carol")]);
    if (!first || !second) throw new Error("two offers make two groups");
    const { container } = render(
      <>
        <GroupHeaderView row={first} nameOf={nameOf} />
        <GroupHeaderView row={second} nameOf={nameOf} />
      </>,
    );
    const [h1, h2] = screen.getAllByRole("heading", { level: 3 });
    expect(h1?.textContent).toContain("Offer 1 of 2");
    expect(h1?.textContent).toContain("Bob Ito");
    expect(h2?.textContent).toContain("Offer 2 of 2");
    expect(h2?.textContent).toContain("Carol Diaz");
    // The status is a badge with text (never colour alone) and a screen-reader prefix.
    const badges = [...container.querySelectorAll("[data-badge]")].map((b) => b.getAttribute("data-badge"));
    expect(badges).toEqual(["Offered", "Accepted"]);
    expect(h2?.textContent).toContain("Offer status: Accepted");
    expect(container.querySelector('[data-group="h2"]')).not.toBeNull();
  });
});

describe("RefusalNoteView", () => {
  const refusal: LocalRefusal = {
    id: "m1",
    sessionId: SID,
    atMs: Date.UTC(2026, 10, 26, 9, 30),
    actor: "alice",
    attempt: "commit",
    code: "FORBIDDEN",
    explanation: "only the approver may commit",
    source: "console",
  };

  it("says what was refused, why, by whom, and that it is local", () => {
    render(<RefusalNoteView refusal={refusal} nameOf={nameOf} />);
    const note = screen.getByTestId("refusal-note");
    expect(note.getAttribute("data-code")).toBe("FORBIDDEN");
    expect(note.getAttribute("data-source")).toBe("console");
    expect(note.textContent).toContain("refused: FORBIDDEN");
    expect(note.textContent).toContain("only the approver may commit");
    expect(note.textContent).toContain("Alice Ng attempted “commit”");
    expect(note.textContent).toContain("the console refused it before sending");
    expect(note.textContent).toContain("not in the session’s history");
  });

  it("clips a long explanation to one line", () => {
    render(<RefusalNoteView refusal={{ ...refusal, explanation: "x".repeat(5000) }} nameOf={nameOf} />);
    expect((screen.getByTestId("refusal-note").textContent ?? "").length).toBeLessThan(2000);
  });
});
