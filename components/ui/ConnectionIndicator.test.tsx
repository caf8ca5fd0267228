// @vitest-environment happy-dom
// The connection badge: its state in words, and motion that stops.

import fs from "node:fs";
import path from "node:path";
import { act, cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const css = fs.readFileSync(path.join(process.cwd(), "app", "globals.css"), "utf8");

/** The declarations of the first rule whose selector list is exactly `selector`. */
function rule(selector: string): string {
  const at = css.indexOf(`\n${selector} {`);
  if (at < 0) return "";
  const open = css.indexOf("{", at);
  return css.slice(open + 1, css.indexOf("}", open));
}

describe("ConnectionBadge", () => {
  it("live: says so in words, and its dot pings a finite number of times (never for ever), none with reduced motion", () => {
    const { container } = render(<ConnectionBadge info={{ state: "live", reconnects: 0 }} label="Session" />);
    const badge = container.querySelector("[data-connection]");
    expect(badge?.getAttribute("data-connection")).toBe("live");
    expect(badge?.textContent).toBe("Session connection: Live");
    expect(container.querySelector(".baton-live-ping")).not.toBeNull();
    expect(container.querySelector("[class*='animate-ping']")).toBeNull();

    const animation = /animation:\s*baton-live-ping\s+([^;]+);/.exec(rule(".baton-live-ping"))?.[1] ?? "";
    const count = animation.trim().split(/\s+/).at(-1);
    expect(count).toMatch(/^\d+$/);
    expect(Number(count)).toBeLessThanOrEqual(5);
    const reduced = css.slice(css.indexOf("@media (prefers-reduced-motion: reduce)"));
    expect(reduced).toMatch(/\.baton-live-ping\s*\{\s*animation:\s*none;/);
  });

  it("reconnecting: counts down to the next attempt, second by second", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { container } = render(<ConnectionBadge info={{ state: "reconnecting", retryAt: 1_005_000, reconnects: 1 }} />);
    expect(container.textContent).toBe("Reconnecting in 5s");
    act(() => vi.advanceTimersByTime(2_000));
    expect(container.textContent).toBe("Reconnecting in 3s");
  });
});
