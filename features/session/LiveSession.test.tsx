// @vitest-environment happy-dom
// LiveSession's hand-over from the server's first view to the live view:
// the stream is opened as soon as its part of the code is in, the live
// screen replaces the preview only once the request is out (a later task),
// and a failed fetch of the code keeps the preview and says so. The two code
// parts are replaced by recording stand-ins: what is tested is the order in
// which LiveSession uses them, not the screen itself (tests/integration and
// e2e/session/14-first-view run the real one).

import { act, cleanup, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, expect, it, vi } from "vitest";

const calls: string[] = [];

vi.mock("@/features/session/open-session-stream", () => ({
  openSessionStream: (sessionId: string, handover: string | undefined) => calls.push(`open ${sessionId} ${handover ?? "-"}`),
  closeOpenedStream: (sessionId: string) => calls.push(`close ${sessionId}`),
}));
const screenStandIn = () => ({
  LiveSessionScreen: ({ sessionId }: { sessionId: string }) => {
    calls.push(`render ${sessionId}`);
    return <p>live view of {sessionId}</p>;
  },
});

beforeEach(() => {
  calls.length = 0;
  vi.resetModules();
  // Again before each test: one test replaces it with a module that fails to load.
  vi.doMock("@/features/session/LiveSessionScreen", screenStandIn);
});
afterEach(cleanup);

async function settle(): Promise<void> {
  // Dynamic imports, then the task that swaps the view in.
  for (let i = 0; i < 5; i++) await act(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

it("opens the stream before the live view renders, and shows the preview until then", async () => {
  const { LiveSession } = await import("@/features/session/LiveSession");
  render(<LiveSession sessionId="s1" preview={<p>first view</p>} handover="h1" />);
  expect(screen.getByText("first view")).toBeTruthy();
  await settle();
  expect(screen.getByText("live view of s1")).toBeTruthy();
  expect(screen.queryByText("first view")).toBeNull();
  // Opened (by the load event and/or the effect: openSessionStream is idempotent) before any render.
  const firstRender = calls.indexOf("render s1");
  expect(firstRender).toBeGreaterThan(0);
  expect(calls.slice(0, firstRender).every((c) => c === "open s1 h1")).toBe(true);
  expect(calls.slice(firstRender).every((c) => c === "render s1")).toBe(true);
});

it("keeps the first view while a press on it is in progress, and swaps the live view in just after its click", async () => {
  const { LiveSession } = await import("@/features/session/LiveSession");
  render(<LiveSession sessionId="s5" preview={<p>first view</p>} handover="h5" />);
  // Pressed before the live code is in: the link under the pointer must still be there at the release.
  act(() => void window.dispatchEvent(new Event("pointerdown")));
  await settle();
  expect(calls).toContain("open s5 h5");
  expect(screen.getByText("first view")).toBeTruthy();
  act(() => void window.dispatchEvent(new Event("pointerup")));
  expect(screen.getByText("first view")).toBeTruthy();
  await settle();
  expect(screen.getByText("live view of s5")).toBeTruthy();
});

it("keeps the first view and says so when the live view's code cannot be fetched", async () => {
  vi.doMock("@/features/session/LiveSessionScreen", () => {
    throw new Error("chunk failed");
  });
  const { LiveSession } = await import("@/features/session/LiveSession");
  render(<LiveSession sessionId="s2" preview={<p>first view</p>} />);
  await settle();
  expect(screen.getByText("first view")).toBeTruthy();
  expect(screen.getByRole("alert").textContent).toMatch(/^Live updates could not be loaded \(.+\)\. What you see may be out of date/);
  expect(calls.some((c) => c.startsWith("render"))).toBe(false);
});

it("closes a stream nobody took over when the page is left before the live view came", async () => {
  // The screen's code never comes; the stream's does.
  vi.doMock("@/features/session/LiveSessionScreen", () => new Promise<never>(() => undefined));
  const { LiveSession } = await import("@/features/session/LiveSession");
  const { unmount } = render(<LiveSession sessionId="s3" preview={<p>first view</p>} handover="h3" />);
  await settle();
  expect(calls).toContain("open s3 h3");
  unmount();
  expect(calls).toContain("close s3");
  expect(calls).not.toContain("render s3");
});

it("hydrates a page without a first view as the server rendered it, even when the live code is already in", async () => {
  const { renderToString } = await import("react-dom/server");
  const { hydrateRoot } = await import("react-dom/client");
  const { liveCode } = await import("@/features/session/live-code");
  const { LiveSession } = await import("@/features/session/LiveSession");
  const html = renderToString(<LiveSession sessionId="s4" preview={null} />);
  expect(html).toContain("Loading session");
  // The shell asked for the code at `load`, and it came before hydration reached the page.
  await liveCode();
  const container = document.createElement("div");
  container.innerHTML = html;
  document.body.append(container);
  const errors: unknown[] = [];
  const root = hydrateRoot(container, <LiveSession sessionId="s4" preview={null} />, { onRecoverableError: (e) => errors.push(e) });
  await settle();
  expect(errors).toEqual([]);
  expect(container.textContent).toBe("live view of s4");
  act(() => root.unmount());
  container.remove();
});

it("shows the live view at once when a page without a first view is opened in the browser and its code is in", async () => {
  const { liveCode } = await import("@/features/session/live-code");
  const { LiveSession } = await import("@/features/session/LiveSession");
  await liveCode();
  render(<LiveSession sessionId="s5" preview={null} />);
  expect(screen.getByText("live view of s5")).toBeTruthy();
});
