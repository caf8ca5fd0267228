// The `test` every e2e spec uses: Playwright's, plus the app of the worker's
// project (the `e2eApp` option each project sets in playwright.config.ts;
// e2e/support/apps.ts), and a guard that the
// console's Content-Security-Policy (lib/server/security-headers.ts) never
// blocks anything the console itself ships. Every page of every browser
// context a test opens (the default one and those made with
// browser.newContext()/newPage()) is watched: a `securitypolicyviolation`
// event or a console message about the policy fails the test, naming what
// was blocked.
import { test as base, expect, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { enterApp, type AppName } from "./apps";

export { expect };

/** Options a project of playwright.config.ts sets in `use`. */
export interface E2eWorkerOptions {
  /** Which of the run's apps the project's specs talk to (e2e/support/apps.ts). */
  e2eApp: AppName;
}

const CSP_CONSOLE = /Content Security Policy|Refused to (execute|load|apply|evaluate|frame|connect|create)/i;

/** In the page: report violations as console errors the test can see. */
function reportViolations(): void {
  document.addEventListener("securitypolicyviolation", (e) => {
    console.error(
      `[csp-violation] ${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber}) sample=${e.sample}`,
    );
  });
}

interface Watch {
  /** The console's origin: only its pages are held to its policy (a test may open other sites, e.g. to frame the console). */
  origin: string;
  out: string[];
  seen: WeakSet<BrowserContext>;
}

function watchPage(page: Page, w: Watch): void {
  page.on("console", (m) => {
    const text = m.text();
    if (!page.url().startsWith(w.origin)) return;
    if (text.startsWith("[csp-violation]") || CSP_CONSOLE.test(text)) w.out.push(`${page.url()}: ${text}`);
  });
}

async function watchContext(context: BrowserContext, w: Watch): Promise<void> {
  if (w.seen.has(context)) return;
  w.seen.add(context);
  await context.addInitScript(reportViolations);
  for (const p of context.pages()) watchPage(p, w);
  context.on("page", (p) => watchPage(p, w));
}

export const test = base.extend<{ cspGuard: void }, E2eWorkerOptions & { enterE2eApp: void }>({
  e2eApp: ["a", { scope: "worker", option: true }],
  // A worker runs the specs of one project, so of one app: agents, browser
  // states and the handoff directory of this worker are that app's.
  enterE2eApp: [
    async ({ e2eApp }, use) => {
      enterApp(e2eApp);
      await use();
    },
    { scope: "worker", auto: true },
  ],
  cspGuard: [
    async ({ browser, context, baseURL }, use) => {
      const violations: string[] = [];
      const w: Watch = { origin: new URL(baseURL ?? "http://127.0.0.1").origin, out: violations, seen: new WeakSet<BrowserContext>() };
      await watchContext(context, w);
      const b = browser as Browser & { newContext: Browser["newContext"]; newPage: Browser["newPage"] };
      const newContext = b.newContext.bind(b);
      const newPage = b.newPage.bind(b);
      b.newContext = async (...args) => {
        const c = await newContext(...args);
        await watchContext(c, w);
        return c;
      };
      b.newPage = async (...args) => {
        const p = await newPage(...args);
        await watchContext(p.context(), w);
        return p;
      };
      try {
        await use();
      } finally {
        b.newContext = newContext;
        b.newPage = newPage;
      }
      expect(violations, "Content-Security-Policy violations").toEqual([]);
    },
    { auto: true },
  ],
});
