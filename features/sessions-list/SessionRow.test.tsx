// @vitest-environment happy-dom
// A list row as a phone shows it (a card): each fact once (issue 12, item 3).
// A closed session's state is said by its status pill; the card's time-left
// slot, which on an open session counts down, does not say it again.

import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { summary } from "@/lib/views/test/fixtures";
import { SessionRow } from "@/features/sessions-list/SessionRow";
import { WithAppRouter } from "@/lib/client/test/app-router";

afterEach(cleanup);

function card(s: ReturnType<typeof summary>): string {
  const { container } = render(
    <WithAppRouter>
      <SessionRow summary={s} selected={false} onSelect={() => undefined} stuckAfterMs={900_000} />
    </WithAppRouter>,
  );
  return container.textContent ?? "";
}

const count = (text: string, word: RegExp): number => text.match(new RegExp(word.source, "gi"))?.length ?? 0;

describe("a session's card", () => {
  it.each([
    [SessionState.EXPIRED, "Open", /expired/],
    [SessionState.CANCELLED, "OfferPending", /cancelled/],
    [SessionState.RESOLVED, "Committed", /committed|resolved/],
  ])("says a closed session's state once (state %i)", (state, phase, word) => {
    const text = card(summary("s1", { state, phase, ...(state === SessionState.RESOLVED ? { outcome: "positive" } : {}) }));
    expect(count(text, word)).toBe(1);
  });

  it("counts down an open session's time left", () => {
    const text = card(summary("s1", { state: SessionState.OPEN, expiresAt: Date.now() + 3_600_000 }));
    expect(text).toContain("Time left");
  });
});
