import http from "node:http";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { NONCE_HEADER } from "@/lib/views/nonce-header";
import { applySecurityHeaders, pageContentSecurityPolicy } from "./security-headers";

function exchange(headers: Record<string, string>): { req: http.IncomingMessage; res: http.ServerResponse } {
  const req = new http.IncomingMessage(new net.Socket());
  Object.assign(req.headers, headers);
  const res = new http.ServerResponse(req);
  return { req, res };
}

describe("security headers", () => {
  it("give pages a fresh nonce, put it where Next.js and the layout read it, and overwrite what a client sent", () => {
    const { req, res } = exchange({ [NONCE_HEADER]: "chosen-by-client", "content-security-policy": "script-src 'nonce-evil'" });
    const nonce = applySecurityHeaders(req, res, { env: {}, dev: false }, true);
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{24}$/);
    const csp = String(res.getHeader("content-security-policy"));
    expect(csp).toBe(pageContentSecurityPolicy(nonce ?? "", { dev: false }));
    expect(csp).toContain(`script-src 'self' 'nonce-${nonce}'`);
    expect(csp).not.toMatch(/unsafe-inline'[^;]*;.*script|script-src[^;]*unsafe/);
    expect(req.headers["content-security-policy"]).toBe(csp);
    expect(req.headers[NONCE_HEADER]).toBe(nonce);
    const again = exchange({});
    expect(applySecurityHeaders(again.req, again.res, { env: {}, dev: false }, true)).not.toBe(nonce);
  });

  it("send nosniff, DENY framing and same-origin referrers everywhere, and a render-nothing CSP off pages", () => {
    const { req, res } = exchange({});
    expect(applySecurityHeaders(req, res, { env: {}, dev: false }, false)).toBeNull();
    expect(res.getHeader("x-content-type-options")).toBe("nosniff");
    expect(res.getHeader("x-frame-options")).toBe("DENY");
    expect(res.getHeader("referrer-policy")).toBe("same-origin");
    expect(res.getHeader("content-security-policy")).toBe(
      "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    expect(res.getHeader("strict-transport-security")).toBeUndefined();
  });

  it("add HSTS only under https (a trusted proxy's word counts)", () => {
    const proxied = exchange({ "x-forwarded-proto": "https" });
    applySecurityHeaders(proxied.req, proxied.res, { env: { BATON_TRUST_PROXY: "1" }, dev: false }, true);
    expect(proxied.res.getHeader("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
    const untrusted = exchange({ "x-forwarded-proto": "https" });
    applySecurityHeaders(untrusted.req, untrusted.res, { env: {}, dev: false }, true);
    expect(untrusted.res.getHeader("strict-transport-security")).toBeUndefined();
  });

  it("allow eval and the hot-reload websocket in development mode only", () => {
    expect(pageContentSecurityPolicy("n", { dev: true })).toContain("'unsafe-eval'");
    expect(pageContentSecurityPolicy("n", { dev: true })).toContain("connect-src 'self' ws: wss:");
    expect(pageContentSecurityPolicy("n", { dev: false })).not.toContain("unsafe-eval");
  });
});
