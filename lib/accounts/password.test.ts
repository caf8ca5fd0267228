import { describe, expect, it } from "vitest";
import {
  TEST_SCRYPT,
  generatePassword,
  hashPassword,
  parsePasswordHash,
  passwordProblem,
  verifyAgainstNothing,
  verifyPassword,
} from "@/lib/accounts/password";

describe("password hashing", () => {
  it("hashes with scrypt, a random salt, and verifies", async () => {
    const a = await hashPassword("correct horse battery", TEST_SCRYPT);
    const b = await hashPassword("correct horse battery", TEST_SCRYPT);
    expect(a).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse battery", a)).toBe(true);
    expect(await verifyPassword("correct horse batterY", a)).toBe(false);
    expect(await verifyPassword("", a)).toBe(false);
  });

  it("uses N=2^15, r=8, p=1 by default", async () => {
    const h = await hashPassword("production cost");
    expect(h.startsWith("scrypt$32768$8$1$")).toBe(true);
    expect(await verifyPassword("production cost", h)).toBe(true);
  });

  it("normalizes Unicode so the same password typed differently still matches", async () => {
    const h = await hashPassword("caf\u00e9-password", TEST_SCRYPT);
    expect(await verifyPassword("cafe\u0301-password", h)).toBe(true);
  });

  it("rejects malformed or hostile hashes without throwing", async () => {
    for (const bad of [
      "",
      "plain",
      "bcrypt$x",
      "scrypt$3$8$1$aaaaaaaaaaaaaaaaaaaaaa$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "scrypt$1073741824$8$1$aaaaaaaaaaaaaaaaaaaaaa$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "scrypt$1024$8$1$short$aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ]) {
      expect("error" in parsePasswordHash(bad)).toBe(true);
      expect(await verifyPassword("x", bad)).toBe(false);
    }
  });

  it("spends comparable time for unknown users", async () => {
    const real = await hashPassword("some password 1", TEST_SCRYPT);
    await verifyAgainstNothing("warm", TEST_SCRYPT);
    // Interleave the two so load on the machine affects both alike.
    let known = 0;
    let unknown = 0;
    for (let i = 0; i < 20; i++) {
      let t0 = performance.now();
      await verifyPassword("wrong password", real);
      known += performance.now() - t0;
      t0 = performance.now();
      await verifyAgainstNothing("wrong password", TEST_SCRYPT);
      unknown += performance.now() - t0;
    }
    // Same work, so within a generous factor (CI timers are noisy).
    expect(unknown).toBeGreaterThan(known / 5);
    expect(unknown).toBeLessThan(known * 5);
    expect(await verifyAgainstNothing("anything", TEST_SCRYPT)).toBe(false);
  });

  it("generates readable random passwords", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const p = generatePassword();
      expect(p).toMatch(/^[A-HJ-NP-Za-km-z2-9]{20}$/);
      seen.add(p);
    }
    expect(seen.size).toBe(50);
    expect(passwordProblem(generatePassword())).toBeNull();
  });

  it("explains unacceptable passwords", () => {
    expect(passwordProblem("short")).toBe("Passwords need at least 10 characters.");
    expect(passwordProblem("          ")).toBe("Passwords can't be only spaces.");
    expect(passwordProblem("tab\there-ok-long")).toBe("Passwords can't contain control characters.");
    expect(passwordProblem("x".repeat(1025))).toBe("Passwords can have at most 1024 characters.");
    expect(passwordProblem("a perfectly fine one")).toBeNull();
  });
});
