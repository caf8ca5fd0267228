import { describe, expect, it } from "vitest";
import { safeReturnTo as browserSafeReturnTo } from "@/lib/views/sign-in";
import { safeReturnTo as serverSafeReturnTo } from "@/lib/oidc/state";
import { safeReturnTo } from "@/lib/views/return-to";

// Every spelling of "another site" a browser would follow from a Location
// header or an <a href>, plus schemes and control characters.
const HOSTILE: readonly unknown[] = [
  "//evil.example",
  "///evil.example",
  "//evil.example/login",
  "/\\evil.example",
  "\\\\evil.example",
  "/\\/evil.example",
  "/.//evil.example/x",
  "/./\\evil.example",
  "/..//evil.example/x",
  "/../..//evil.example",
  "/a/../..//evil.example",
  "/%2e//evil.example",
  "/%2E//evil.example",
  "/%2e%2e//evil.example",
  "/.%2e//evil.example",
  "/./%2e//evil.example/login",
  "/\t/evil.example",
  "/\n/evil.example",
  "/\r\n/evil.example",
  "/\t\t/evil.example",
  "/ /evil.example",
  " /x",
  "/x\u0000",
  "/x\u007f",
  "https://evil.example/",
  "http:evil.example",
  "http:/evil.example",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "evil.example",
  "%2F%2Fevil.example",
  "sessions",
  "",
  `/${"a".repeat(3000)}`,
  null,
  undefined,
  42,
  ["/inbox"],
  { toString: () => "/inbox" },
];

const ACCEPTED: readonly [string, string][] = [
  ["/", "/"],
  ["/inbox", "/inbox"],
  ["/sessions/abc?event=3#e-3", "/sessions/abc?event=3#e-3"],
  ["/sessions?state=open&mode=handoff", "/sessions?state=open&mode=handoff"],
  ["/./sessions/abc", "/sessions/abc"],
  ["/a/../inbox", "/inbox"],
  ["/%2e/inbox", "/inbox"],
  ["/..", "/"],
  // Encoded slashes and backslashes stay encoded: a path on this console.
  ["/%2F%2Fevil.example", "/%2F%2Fevil.example"],
  ["/%5Cevil.example", "/%5Cevil.example"],
];

describe("safeReturnTo", () => {
  const implementations = [
    ["shared", safeReturnTo],
    ["browser (lib/client/auth)", browserSafeReturnTo],
    ["server (lib/oidc)", serverSafeReturnTo],
  ] as const;

  for (const [name, fn] of implementations) {
    it(`${name}: never leaves the console, in any spelling`, () => {
      for (const raw of HOSTILE) {
        const out = (fn as (v: unknown) => string)(raw);
        expect(out, `returnTo ${JSON.stringify(raw)}`).toBe("/");
      }
    });

    it(`${name}: keeps same-origin paths, normalised`, () => {
      for (const [raw, want] of ACCEPTED) expect((fn as (v: unknown) => string)(raw), raw).toBe(want);
    });
  }

  it("the result is what a browser would follow: resolved against any origin it stays on that origin", () => {
    for (const raw of [...HOSTILE, ...ACCEPTED.map(([r]) => r)]) {
      const out = safeReturnTo(raw);
      const followed = new URL(out, "https://console.example:8443/sessions/x");
      expect(followed.origin, JSON.stringify(raw)).toBe("https://console.example:8443");
    }
  });

  it("does not send anyone back to the sign-in pages", () => {
    for (const raw of ["/login", "/login?returnTo=/x", "/auth/logout", "/auth/oidc/login", "/account/password", "/./login"]) {
      expect(safeReturnTo(raw)).toBe("/");
    }
  });
});
