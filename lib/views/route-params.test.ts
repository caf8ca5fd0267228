import { describe, expect, it } from "vitest";
import { parseEventHash, parseEventParam, parseSessionIdParam, sessionHref } from "@/lib/views/route-params";

describe("route params", () => {
  it("accepts UUIDs and base64url ids", () => {
    expect(parseSessionIdParam("3f2504e0-4f89-41d3-9a0c-0305e82c3301")).toBe("3f2504e0-4f89-41d3-9a0c-0305e82c3301");
    expect(parseSessionIdParam("01JCHAND9Y5P9V4H0A8E0F4H01")).toBe("01JCHAND9Y5P9V4H0A8E0F4H01");
  });
  it("rejects anything else", () => {
    expect(parseSessionIdParam("../etc")).toBeUndefined();
    expect(parseSessionIdParam("%3Cscript%3E")).toBeUndefined();
    expect(parseSessionIdParam("%E0%A4%A")).toBeUndefined();
    expect(parseSessionIdParam("x".repeat(129))).toBeUndefined();
    expect(parseSessionIdParam("")).toBeUndefined();
    // Shapes no runtime accepts as a session id (§2.6): too short, an uppercase or v1 UUID.
    expect(parseSessionIdParam("abc")).toBeUndefined();
    expect(parseSessionIdParam("3F2504E0-4F89-41D3-9A0C-0305E82C3301")).toBeUndefined();
    expect(parseSessionIdParam("6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBeUndefined();
  });
  it("parses event deep links", () => {
    expect(parseEventParam("12")).toBe(12);
    expect(parseEventParam("0")).toBeUndefined();
    expect(parseEventParam("-1")).toBeUndefined();
    expect(parseEventParam("1e3")).toBeUndefined();
    expect(parseEventParam("99999999999999999")).toBeUndefined();
    expect(parseEventHash("#e-7")).toBe(7);
    expect(parseEventHash("#x-7")).toBeUndefined();
  });
  it("builds hrefs", () => {
    expect(sessionHref("abc", 3)).toBe("/sessions/abc?event=3");
  });
});
