import { describe, expect, it } from "vitest";
import { isSessionPagePath } from "@/features/session/live-code";

describe("isSessionPagePath", () => {
  it("is true for a session's page only", () => {
    expect(isSessionPagePath("/sessions/0f2b4ead-ad5c-4238-8afb-25cf58d091b0")).toBe(true);
    expect(isSessionPagePath("/sessions/0f2b4ead-ad5c-4238-8afb-25cf58d091b0/")).toBe(true);
    expect(isSessionPagePath("/sessions/new")).toBe(false);
    expect(isSessionPagePath("/sessions/0f2b4ead-ad5c-4238-8afb-25cf58d091b0/report")).toBe(false);
    expect(isSessionPagePath("/sessions/not%20an%20id")).toBe(false);
    expect(isSessionPagePath("/")).toBe(false);
    expect(isSessionPagePath("/inbox")).toBe(false);
  });
});
