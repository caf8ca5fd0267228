// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, expect, it, vi } from "vitest";
import { FloatingLatest, latestVisibility } from "@/features/session/FloatingLatest";

afterEach(cleanup);

it("shows the button only while the newest event is off screen, and jumps when pressed", () => {
  const visibility = latestVisibility();
  const onJump = vi.fn();
  render(<FloatingLatest visibility={visibility} onJump={onJump} />);
  expect(screen.queryByTestId("jump-latest-floating")).toBeNull();
  act(() => visibility.set(false));
  fireEvent.click(screen.getByRole("button", { name: "Jump to latest" }));
  expect(onJump).toHaveBeenCalledTimes(1);
  act(() => visibility.set(true));
  expect(screen.queryByTestId("jump-latest-floating")).toBeNull();
});

it("tells its listeners only when the flag changes", () => {
  const visibility = latestVisibility(true);
  const listener = vi.fn();
  const stop = visibility.subscribe(listener);
  visibility.set(true);
  expect(listener).not.toHaveBeenCalled();
  visibility.set(false);
  visibility.set(false);
  expect(listener).toHaveBeenCalledTimes(1);
  stop();
  visibility.set(true);
  expect(listener).toHaveBeenCalledTimes(1);
  expect(visibility.get()).toBe(true);
});
