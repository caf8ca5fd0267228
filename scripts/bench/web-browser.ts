// bench:web's browser contexts: the viewport, the signed-in session every
// fresh context starts with (cache off), and a wall clock comparable to the
// page's own.
import type { Browser, BrowserContext, Page } from "playwright-core";

export const VIEWPORT = { width: 1440, height: 900 };

/** Chromium's flags for the benchmarks (headless, in a container, nothing in the background). */
export const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"];

/** Wall-clock ms with sub-ms resolution, comparable to the page's `timeOrigin + now()`. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/** Cookies every fresh context starts with (the signed-in session); set by the orchestrator. */
export const session: { origin: string; cookies: { name: string; value: string }[] } = { origin: "", cookies: [] };

/** A new browser context, signed in, with the HTTP cache off, and its page. */
export async function freshContext(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: "light", reducedMotion: "no-preference" });
  if (session.cookies.length > 0) {
    await context.addCookies(session.cookies.map((c) => ({ ...c, url: session.origin, httpOnly: true, sameSite: "Lax" as const })));
  }
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  return { context, page };
}
