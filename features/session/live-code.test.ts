import { describe, expect, it } from "vitest";
import { sessionOfPagePath } from "@/features/session/live-code";

describe("sessionOfPagePath", () => {
  it("is the session of a session's page, and nothing for any other page", () => {
    expect(sessionOfPagePath("/sessions/0f2b4ead-ad5c-4238-8afb-25cf58d091b0")).toBe("0f2b4ead-ad5c-4238-8afb-25cf58d091b0");
    expect(sessionOfPagePath("/sessions/0f2b4ead-ad5c-4238-8afb-25cf58d091b0/")).toBe("0f2b4ead-ad5c-4238-8afb-25cf58d091b0");
    expect(sessionOfPagePath("/sessions/new")).toBeUndefined();
    expect(sessionOfPagePath("/sessions/0f2b4ead-ad5c-4238-8afb-25cf58d091b0/report")).toBeUndefined();
    expect(sessionOfPagePath("/sessions/not%20an%20id")).toBeUndefined();
    expect(sessionOfPagePath("/")).toBeUndefined();
    expect(sessionOfPagePath("/inbox")).toBeUndefined();
  });
});
