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
