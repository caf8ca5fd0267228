// @vitest-environment happy-dom
// Badges say their state in words (with an icon), never by colour alone.

import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { PHASE_INFO, PHASES, stateBadge } from "@/lib/views/labels";
import { Badge, OutcomeBadge, TONE_CLASSES } from "@/components/ui/Badge";

afterEach(cleanup);

describe("Badge", () => {
  it.each(PHASES)("phase %s: its label as text, its hint as the title, an icon, its tone", (phase) => {
    const info = PHASE_INFO[phase];
    const { container } = render(<Badge info={info} kind="Phase" />);
    const badge = container.querySelector("[data-badge]");
    expect(badge?.getAttribute("data-badge")).toBe(info.label);
    expect(badge?.textContent).toBe(`Phase: ${info.label}`);
    expect(badge?.getAttribute("title")).toBe(info.hint);
    expect(badge?.querySelector("svg")).not.toBeNull();
    for (const cls of (TONE_CLASSES[info.tone] ?? "").split(" ")) expect(badge?.classList.contains(cls)).toBe(true);
  });

  it("the screen-reader prefix is only there when asked for", () => {
    const { container } = render(<Badge info={stateBadge(undefined)} />);
    expect(container.querySelector(".sr-only")).toBeNull();
  });

  it("outcome badges say positive or negative in words", () => {
    const { container } = render(
      <>
        <OutcomeBadge positive />
        <OutcomeBadge positive={false} size="md" />
      </>,
    );
    expect([...container.querySelectorAll("[data-badge]")].map((b) => b.textContent)).toEqual(["Positive outcome", "Negative outcome"]);
  });
});
