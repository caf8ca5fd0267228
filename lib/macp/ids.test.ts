import { describe, expect, it } from "vitest";
import { isValidSessionId, newMessageId, newSessionId } from "@/lib/macp/ids";

describe("isValidSessionId (§2.6)", () => {
  it("accepts lowercase canonical UUID v4 and v7", () => {
    expect(isValidSessionId("550e8400-e29b-41d4-a716-446655440000")).toBe(true);
    expect(isValidSessionId("01890a5d-ac96-774b-bcce-b302099a8057")).toBe(true);
  });

  it("rejects an uppercase UUID v4 even though its characters are base64url", () => {
    expect(isValidSessionId("550E8400-E29B-41D4-A716-446655440000")).toBe(false);
    expect(isValidSessionId("550e8400-e29b-41d4-a716-44665544000A")).toBe(false);
  });

  it("rejects UUIDs of other versions (v1, v3, v5, v6)", () => {
    expect(isValidSessionId("6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe(false); // v1
    expect(isValidSessionId("6ba7b810-9dad-31d1-80b4-00c04fd430c8")).toBe(false); // v3
    expect(isValidSessionId("6ba7b810-9dad-51d1-80b4-00c04fd430c8")).toBe(false); // v5
    expect(isValidSessionId("1ef21d2f-1207-6660-8c4f-419efbd44d48")).toBe(false); // v6
  });

  it("accepts 26-char ULIDs and any ≥22-char base64url string", () => {
    expect(isValidSessionId("01JCHAND9Y5P9V4H0A8E0F4H01")).toBe(true);
    expect(isValidSessionId("a".repeat(22))).toBe(true);
    expect(isValidSessionId("AbC_dEf-0123456789xyzQ")).toBe(true);
  });

  it("rejects 21-char base64url, empty strings and foreign characters", () => {
    expect(isValidSessionId("AbC_dEf-0123456789xyz")).toBe(false); // 21
    expect(isValidSessionId("")).toBe(false);
    expect(isValidSessionId("01JCHAND9Y5P9V4H0A8E0F4H0=")).toBe(false);
    expect(isValidSessionId("01JCHAND9Y5P9V4H0A8E0F4H0 ")).toBe(false);
    expect(isValidSessionId("01JCHAND9Y5P9V4H0A8E0F4H0/")).toBe(false);
  });

  it("newSessionId and newMessageId produce valid, distinct UUID v4s", () => {
    const a = newSessionId();
    const b = newSessionId();
    expect(a).not.toBe(b);
    expect(isValidSessionId(a)).toBe(true);
    expect(a[14]).toBe("4");
    expect(newMessageId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
