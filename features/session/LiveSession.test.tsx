// @vitest-environment happy-dom
// LiveSession's hand-over from the server's first view to the live view:
// the stream is opened as soon as its part of the code is in, the live
// screen replaces the preview only once the request is out (a later task)
// and, with a handed-over state, once the stream has settled; a failed fetch
// of the code keeps the preview and says so; hydration keeps the preview's
// server markup without rendering its components. The two code
// parts are replaced by recording stand-ins: what is tested is the order in
// which LiveSession uses them, not the screen itself (tests/integration and
// e2e/session/14-first-view run the real one).

import { act, cleanup, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, expect, it, vi } from "vitest";

const calls: string[] = [];
/** When the stand-in stream settles (caught up); each test's stream settles at once unless it replaces this. */
let streamSettled: Promise<void> = Promise.resolve();

vi.mock("@/features/session/open-session-stream", () => ({
  openSessionStream: (sessionId: string, handover: string | undefined) => calls.push(`open ${sessionId} ${handover ?? "-"}`),
  closeOpenedStream: (sessionId: string) => calls.push(`close ${sessionId}`),
  openedStreamSettled: (sessionId: string, capMs: number) => {
    calls.push(`wait ${sessionId} ${capMs}`);
    return streamSettled.then(() => calls.push(`settled ${sessionId}`));
  },
}));
const screenStandIn = () => ({
  LiveSessionScreen: ({ sessionId }: { sessionId: string }) => {
    calls.push(`render ${sessionId}`);
    return <p>live view of {sessionId}</p>;
  },
});

beforeEach(() => {
  calls.length = 0;
  streamSettled = Promise.resolve();
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
  // Opened (by the load event and/or the effect: openSessionStream is idempotent), then waited for, before any render.
  const firstRender = calls.indexOf("render s1");
  expect(firstRender).toBeGreaterThan(0);
  expect(calls.slice(0, firstRender).filter((c) => c !== "open s1 h1")).toEqual(["wait s1 250", "settled s1"]);
  expect(calls.slice(firstRender).every((c) => c === "render s1")).toBe(true);
});

it("keeps the first view until a handed-over stream has settled", async () => {
  let settleNow!: () => void;
  streamSettled = new Promise<void>((resolve) => (settleNow = resolve));
  const { LiveSession } = await import("@/features/session/LiveSession");
  render(<LiveSession sessionId="s6" preview={<p>first view</p>} handover="h6" />);
  await settle();
  expect(calls).toContain("wait s6 250");
  expect(screen.getByText("first view")).toBeTruthy();
  expect(calls).not.toContain("render s6");
  settleNow();
  await settle();
  expect(screen.getByText("live view of s6")).toBeTruthy();
});

it("does not wait for a stream that has nothing handed over to resume from", async () => {
  const { LiveSession } = await import("@/features/session/LiveSession");
  render(<LiveSession sessionId="s7" preview={null} />);
  await settle();
  expect(screen.getByText("live view of s7")).toBeTruthy();
  expect(calls.some((c) => c.startsWith("wait"))).toBe(false);
});

it("hydrates the first view as the server sent it, without rendering its components", async () => {
  const { renderToString } = await import("react-dom/server");
  const { hydrateRoot } = await import("react-dom/client");
  // The screen's code never comes: the first view stays.
  vi.doMock("@/features/session/LiveSessionScreen", () => new Promise<never>(() => undefined));
  const { LiveSession } = await import("@/features/session/LiveSession");
  let previewRenders = 0;
  function Preview() {
    previewRenders++;
    return <p>first view</p>;
  }
  const html = renderToString(<LiveSession sessionId="s8" preview={<Preview />} handover="h8" resumeAfter={8} />);
  expect(html).toContain("first view");
  // Where the handed-over state ends, for the shell's early stream request (early-session-stream.ts).
  expect(html).toContain('data-resume-after="8"');
  const container = document.createElement("div");
  container.innerHTML = html;
  document.body.append(container);
  previewRenders = 0;
  const errors: unknown[] = [];
  let root!: ReturnType<typeof hydrateRoot>;
  act(() => {
    root = hydrateRoot(container, <LiveSession sessionId="s8" preview={<Preview />} handover="h8" resumeAfter={8} />, {
      onRecoverableError: (e) => errors.push(e),
    });
  });
  await settle();
  expect(errors).toEqual([]);
  expect(previewRenders).toBe(0);
  expect(container.innerHTML).toBe(html);
  act(() => root.unmount());
  container.remove();
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
