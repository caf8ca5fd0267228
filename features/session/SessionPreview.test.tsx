// @vitest-environment happy-dom
// The session page's first view holds a bounded number of timeline rows,
// whatever the history's length (each row is markup the server renders
// before the page's first byte), says how many events the live timeline
// adds, and shows a deep-linked event with the rows before it.

import { renderToStaticMarkup } from "react-dom/server";
import type { ReactElement } from "react";
import { describe, expect, it } from "vitest";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { SID, caughtUpMsg, context, eventMsg, metadataMsg, offer, start } from "@/lib/views/test/fixtures";
import { PREVIEW_ROWS, SessionPreview } from "@/features/session/SessionPreview";
import { WithAppRouter } from "@/lib/client/test/app-router";

/** The first view as the server renders it. */
function render(element: ReactElement): { container: HTMLElement } {
  const container = document.createElement("div");
  container.innerHTML = renderToStaticMarkup(<WithAppRouter>{element}</WithAppRouter>);
  return { container };
}

/** start, an offer and `contexts` contexts on it, folded and caught up. */
function session(contexts: number) {
  const envelopes: Envelope[] = [start(), offer("h1", "bob")];
  for (let i = 1; i <= contexts; i++) envelopes.push(context("h1", `note ${i}`));
  return applySubscribeBatch(beginConnection(initialSessionStreamState(SID)), [
    metadataMsg(SessionState.OPEN),
    ...envelopes.map((e, i) => eventMsg(i + 1, e, 1_700_000_000_000 + i)),
    caughtUpMsg(envelopes.length),
  ]).state;
}

const sequencesShown = (container: HTMLElement): number[] =>
  [...container.querySelectorAll("[data-testid=timeline-preview] article[data-sequence]")].map((a) =>
    Number(a.getAttribute("data-sequence")),
  );

describe("the session page's first view", () => {
  it("shows at most PREVIEW_ROWS rows of a long session and says how many more the live timeline shows", () => {
    const { container } = render(<SessionPreview state={session(40)} />);
    const shown = sequencesShown(container);
    const rows = container.querySelectorAll("[data-testid=timeline-preview] > *");
    expect(rows.length).toBe(PREVIEW_ROWS);
    expect(shown[0]).toBe(1);
    // 42 events: the start, the offer and 40 contexts.
    expect(container.textContent).toContain(`${42 - shown.length} more events appear with the live timeline.`);
  });

  it("shows every row of a short session and no 'more events' line", () => {
    const { container } = render(<SessionPreview state={session(2)} />);
    expect(sequencesShown(container)).toEqual([1, 2, 3, 4]);
    expect(container.textContent).not.toContain("more event");
  });

  it("shows a deep-linked event with the rows before it", () => {
    const { container } = render(<SessionPreview state={session(40)} aroundSequence={30} />);
    const shown = sequencesShown(container);
    expect(shown).toContain(30);
    expect(container.querySelectorAll("[data-testid=timeline-preview] > *").length).toBeLessThanOrEqual(PREVIEW_ROWS);
    expect(shown.filter((s) => s < 30).length).toBeGreaterThan(0);
    expect(container.querySelector("#e-30")?.textContent).toContain("note 28");
  });
});
