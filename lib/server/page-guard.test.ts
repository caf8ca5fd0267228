import { describe, expect, it } from "vitest";
import { isDocumentNavigation, signInRedirect } from "./page-guard";

const page = { accept: "text/html,application/xhtml+xml", "sec-fetch-dest": "document" };

describe("signInRedirect", () => {
  it("sends signed-out page visits to /login with the page to return to", () => {
    expect(signInRedirect("GET", "/", page)).toBe("/login");
    expect(signInRedirect("GET", "/sessions/abc?event=3", page)).toBe("/login?returnTo=%2Fsessions%2Fabc%3Fevent%3D3");
    expect(signInRedirect("get", "/inbox", { accept: "text/html" })).toBe("/login?returnTo=%2Finbox");
  });

  it("lets the sign-in page, assets, /auth/* and data requests through", () => {
    expect(signInRedirect("GET", "/login?error=invalid", page)).toBeNull();
    expect(signInRedirect("GET", "/_next/static/chunks/app.js", { accept: "*/*" })).toBeNull();
    expect(signInRedirect("GET", "/favicon.svg", page)).toBeNull();
    expect(signInRedirect("GET", "/auth/oidc/callback?code=x", page)).toBeNull();
    expect(signInRedirect("POST", "/inbox", page)).toBeNull();
    expect(signInRedirect("GET", "/inbox", { ...page, rsc: "1" })).toBeNull();
    expect(signInRedirect("GET", "/inbox?_rsc=abc", { accept: "text/html" })).toBeNull();
    expect(signInRedirect("GET", "/inbox", { ...page, "next-router-prefetch": "1" })).toBeNull();
    expect(signInRedirect("GET", "/inbox", { accept: "application/json" })).toBeNull();
  });

  it("trusts Sec-Fetch-Dest over Accept", () => {
    expect(isDocumentNavigation("GET", new URL("http://x/"), { accept: "text/html", "sec-fetch-dest": "empty" })).toBe(false);
    expect(isDocumentNavigation("HEAD", new URL("http://x/"), { "sec-fetch-dest": "document" })).toBe(true);
  });
});
