// Security headers and framing (issue 10, item 6): every page has a strict
// Content-Security-Policy with a per-request nonce on every script, and can
// be framed by nobody; the fixture in support/fixtures.ts fails any test whose
// pages hit a CSP violation. Pages of another origin (another port of the
// same host) cannot show a signed-in session page with its action buttons.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { Agent, newSessionId } from "../support/agent";
import { expect, test } from "../support/fixtures";
import { authFile } from "../support/people";
import { uniqueSuffix } from "../support/ui";

test("pages carry a nonce-based CSP, frame-ancestors 'none', X-Frame-Options, nosniff and Referrer-Policy; every inline script has the nonce", async ({
  request,
}) => {
  const nonces = new Set<string>();
  for (const path of ["/", "/sessions", "/inbox", "/login", "/no-such-page"]) {
    const res = await request.get(path, { headers: { accept: "text/html" } });
    const h = res.headers();
    const csp = h["content-security-policy"] ?? "";
    const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    expect(nonce, `${path}: ${csp}`).toBeTruthy();
    nonces.add(nonce ?? "");
    const script =
      csp
        .split(";")
        .map((d) => d.trim())
        .find((d) => d.startsWith("script-src")) ?? "";
    expect(script).not.toContain("'unsafe-inline'");
    expect(script).not.toContain("'unsafe-eval'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(h["x-frame-options"]).toBe("DENY");
    expect(h["x-content-type-options"]).toBe("nosniff");
    expect(h["referrer-policy"]).toBe("same-origin");
    // Plain http here: no HSTS (it would pin a host that does not speak https).
    expect(h["strict-transport-security"]).toBeUndefined();
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1] ?? "");
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs, `${path}: <script${attrs}>`).toContain(`nonce="${nonce}"`);
  }
  // A fresh nonce per response.
  expect(nonces.size).toBe(5);
  // Sign-in and Connect answers are never meant to be rendered.
  const methods = await request.get("/auth/methods");
  expect(methods.headers()["content-security-policy"]).toBe(
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  );
  expect(methods.headers()["x-frame-options"]).toBe("DENY");
});

test("a page on another port cannot frame a signed-in session page", async ({ browser }) => {
  const owner = new Agent("agent://frame/owner");
  const sid = newSessionId();
  await owner.start(sid, HANDOFF_MODE, `Frame me ${uniqueSuffix()}`, [owner.id, "human:bob"]);
  await owner.offer(sid, "h1", "human:bob", "pager", "please");
  const consoleUrl = `${new URL(test.info().project.use.baseURL ?? "").origin}/sessions/${sid}`;
  const evil = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>evil</title><iframe id="victim" src="${consoleUrl}" width="800" height="600"></iframe>`);
  });
  await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
  const context = await browser.newContext({ storageState: authFile("bob") });
  try {
    const page = await context.newPage();
    // The console page itself, directly: bob sees his Accept button.
    await page.goto(consoleUrl);
    await expect(page.getByTestId("action-panel").getByTestId("action-accept")).toBeVisible();
    const blocked = page.waitForEvent("console", {
      predicate: (m) => /frame-ancestors|Refused to (display|frame)/i.test(m.text()),
      timeout: 10_000,
    });
    await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
    await blocked;
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    // Nothing of the console rendered inside: no button to click through.
    expect(await frame?.locator("[data-testid=action-accept]").count()).toBe(0);
    expect(frame?.url().startsWith(consoleUrl) && (await frame.locator("body *").count()) > 0).toBe(false);
  } finally {
    await context.close();
    evil.close();
  }
});
