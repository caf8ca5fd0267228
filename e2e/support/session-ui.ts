// Helpers for the e2e suites where people act through the console: signed-in
// browser contexts, the action panel, and raw Connect calls (the protocol's
// JSON form) for requests a browser page would never make.

import type { APIRequestContext, APIResponse, Browser, BrowserContext, Locator, Page } from "@playwright/test";
import { expect } from "@playwright/test";
import { authFile, type PersonKey } from "./people";

export interface Person {
  context: BrowserContext;
  page: Page;
}

export async function signedInAs(
  browser: Browser,
  who: PersonKey,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<Person> {
  const context = await browser.newContext({ storageState: authFile(who), ...(options.viewport ? { viewport: options.viewport } : {}) });
  const page = await context.newPage();
  return { context, page };
}

export function actionButton(page: Page, action: string): Locator {
  return page.getByTestId("action-panel").getByTestId(`action-${action}`);
}

/** The session id of the session page shown. */
export function sessionIdOf(page: Page): string {
  const m = /\/sessions\/([^/?#]+)/.exec(page.url());
  if (!m?.[1]) throw new Error(`not on a session page: ${page.url()}`);
  return decodeURIComponent(m[1]);
}

/** The CSRF token of the session behind `request`'s cookies. */
export async function csrfTokenOf(request: APIRequestContext): Promise<string> {
  const res = await request.get("/auth/whoami");
  expect(res.status()).toBe(200);
  const me = (await res.json()) as { csrfToken?: unknown };
  if (typeof me.csrfToken !== "string") throw new Error("whoami without a CSRF token");
  return me.csrfToken;
}

/** A unary ActionService call in the Connect protocol's JSON form. */
export function connectJson(
  request: APIRequestContext,
  method: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<APIResponse> {
  return request.post(`/baton.v1.ActionService/${method}`, {
    headers: { "content-type": "application/json", ...headers },
    data: JSON.stringify(body),
  });
}

export async function expectConnectError(res: APIResponse, status: number, code: string, message?: RegExp): Promise<void> {
  expect(res.status()).toBe(status);
  const body = (await res.json()) as { code?: string; message?: string };
  expect(body.code).toBe(code);
  if (message) expect(body.message ?? "").toMatch(message);
}

/**
 * One ActionService call as the person behind `req`; returns the new session's or offer's id. The
 * console's view of a session may trail a just-sent message by a moment, so a refusal about the
 * offer's id is retried.
 */
export async function callAction(req: APIRequestContext, method: string, body: Record<string, unknown>): Promise<string> {
  const csrf = { "x-baton-csrf": await csrfTokenOf(req) };
  for (let attempt = 0; ; attempt += 1) {
    const res = await connectJson(req, method, { messageId: globalThis.crypto.randomUUID(), ...body }, csrf);
    const text = await res.text();
    if (res.status() === 400 && attempt < 20 && text.includes("handoff_id")) {
      await new Promise((r) => setTimeout(r, 150));
      continue;
    }
    expect(res.status(), `${method}: ${text}`).toBe(200);
    const result = JSON.parse(text) as { ok?: boolean; sessionId?: string; handoffId?: string };
    expect(result.ok, `${method}: ${text}`).toBe(true);
    return method === "StartSession" ? (result.sessionId ?? "") : (result.handoffId ?? "");
  }
}

/** An init script that records notifications in window.__notes instead of showing them (permission granted). */
export const FAKE_NOTIFICATIONS = `
  window.__notes = [];
  class FakeNotification {
    static permission = "granted";
    static requestPermission() { return Promise.resolve("granted"); }
    constructor(title, options) { window.__notes.push({ title, body: (options && options.body) || "" }); }
    close() {}
  }
  window.Notification = FakeNotification;
`;
