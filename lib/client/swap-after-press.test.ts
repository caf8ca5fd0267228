// @vitest-environment happy-dom
import { act, cleanup, render, screen } from "@testing-library/react";
import { createElement } from "react";
import { afterEach, expect, it, vi } from "vitest";
import { MAX_HOLD_MS, trackPresses, useSwapWhenUnpressed } from "@/lib/client/swap-after-press";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const press = (type: "pointerdown" | "pointerup" | "pointercancel"): void => {
  window.dispatchEvent(new Event(type));
};
const nextTask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

it("is pressed from the press until the task after its release, when the click has been dispatched", async () => {
  const tracker = trackPresses(window);
  const changes: boolean[] = [];
  tracker.subscribe(() => changes.push(tracker.pressed()));
  expect(tracker.pressed()).toBe(false);
  press("pointerdown");
  expect(tracker.pressed()).toBe(true);
  press("pointerup");
  // The click comes with the release, in the same task: still pressed for it.
  expect(tracker.pressed()).toBe(true);
  await nextTask();
  expect(tracker.pressed()).toBe(false);
  press("pointerdown");
  press("pointercancel");
  await nextTask();
  expect(tracker.pressed()).toBe(false);
  expect(changes).toEqual([true, false, true, false]);
  tracker.dispose();
});

it("a release without a press changes nothing, and a press held too long stops holding", () => {
  vi.useFakeTimers();
  const tracker = trackPresses(window);
  press("pointerup");
  vi.runAllTimers();
  expect(tracker.pressed()).toBe(false);
  press("pointerdown");
  vi.advanceTimersByTime(MAX_HOLD_MS - 1);
  expect(tracker.pressed()).toBe(true);
  vi.advanceTimersByTime(1);
  expect(tracker.pressed()).toBe(false);
  tracker.dispose();
});

it("stops following presses once disposed", () => {
  const tracker = trackPresses(window);
  tracker.dispose();
  press("pointerdown");
  expect(tracker.pressed()).toBe(false);
});

function Swap({ ready, renders }: { ready: boolean; renders: string[] }) {
  const allowed = useSwapWhenUnpressed(ready);
  const shown = ready && allowed ? "live" : "first view";
  renders.push(shown);
  return createElement("p", null, shown);
}

it("holds the swap while a press that began on the first view is in progress, then swaps once and stays", async () => {
  const renders: string[] = [];
  const { rerender } = render(createElement(Swap, { ready: false, renders }));
  expect(screen.getByText("first view")).toBeTruthy();
  // A press begins; the live code comes in meanwhile.
  act(() => press("pointerdown"));
  rerender(createElement(Swap, { ready: true, renders }));
  expect(screen.getByText("first view")).toBeTruthy();
  act(() => press("pointerup"));
  expect(screen.getByText("first view")).toBeTruthy();
  await act(nextTask);
  expect(screen.getByText("live")).toBeTruthy();
  // Later presses on the live screen render nothing again and never bring the first view back.
  const count = renders.length;
  act(() => press("pointerdown"));
  act(() => press("pointerup"));
  await act(nextTask);
  expect(screen.getByText("live")).toBeTruthy();
  expect(renders.length).toBe(count);
});

it("swaps at once when nothing is pressed", () => {
  const renders: string[] = [];
  const { rerender } = render(createElement(Swap, { ready: false, renders }));
  rerender(createElement(Swap, { ready: true, renders }));
  expect(screen.getByText("live")).toBeTruthy();
});
