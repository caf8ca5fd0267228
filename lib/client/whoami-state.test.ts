import { describe, expect, it } from "vitest";
import type { AuthMethods, WhoAmI } from "@/lib/views/sign-in";
import {
  answered,
  attemptWithRetries,
  AUTH_RETRIES,
  failed,
  INITIAL_AUTH_STATE,
  invalidated,
  isStale,
  methodsAnswered,
  retryDelay,
  shouldCheck,
  shouldLoadMethods,
  WHOAMI_STALE_MS,
  type AuthState,
} from "@/lib/client/whoami-state";

const ALICE: WhoAmI = {
  username: "alice",
  displayName: "Alice Ng",
  role: "operator",
  participantId: "human:alice",
  authMethod: "password",
  mustChangePassword: false,
  csrfToken: "tok-1",
  sessionEndsAt: 0,
};

const T0 = 1_000_000;
const at = (me: WhoAmI | null, when = T0): AuthState => answered(INITIAL_AUTH_STATE, me, when);
const ctx = (now: number, extra: Partial<{ fetching: boolean; visible: boolean }> = {}) => ({
  now,
  fetching: false,
  visible: true,
  ...extra,
});

describe("freshness", () => {
  it("nothing answered yet is stale", () => {
    expect(isStale(INITIAL_AUTH_STATE, T0)).toBe(true);
  });

  it("an answer is fresh for a minute, signed in or signed out", () => {
    for (const me of [ALICE, null]) {
      expect(isStale(at(me), T0 + WHOAMI_STALE_MS - 1)).toBe(false);
      expect(isStale(at(me), T0 + WHOAMI_STALE_MS)).toBe(true);
    }
  });

  it("refresh() makes an answer stale until the next one", () => {
    const s = invalidated(at(ALICE));
    expect(isStale(s, T0 + 1)).toBe(true);
    expect(isStale(answered(s, ALICE, T0 + 2), T0 + 3)).toBe(false);
  });
});

describe("when to check", () => {
  it("the first component to mount starts the first check; others join the one in flight", () => {
    expect(shouldCheck(INITIAL_AUTH_STATE, "mount", ctx(T0))).toBe(true);
    expect(shouldCheck(INITIAL_AUTH_STATE, "mount", ctx(T0, { fetching: true }))).toBe(false);
  });

  it("mounting or coming back to the tab re-checks only a stale answer", () => {
    for (const reason of ["mount", "focus"] as const) {
      expect(shouldCheck(at(ALICE), reason, ctx(T0 + 10_000))).toBe(false);
      expect(shouldCheck(at(ALICE), reason, ctx(T0 + WHOAMI_STALE_MS))).toBe(true);
    }
  });

  it("a hidden tab is not re-checked on focus events nor on the interval", () => {
    expect(shouldCheck(at(ALICE), "focus", ctx(T0 + WHOAMI_STALE_MS, { visible: false }))).toBe(false);
    expect(shouldCheck(at(ALICE), "interval", ctx(T0 + 10, { visible: false }))).toBe(false);
  });

  it("the interval re-checks whatever the answer's age, but not twice at once", () => {
    expect(shouldCheck(at(ALICE), "interval", ctx(T0 + 10))).toBe(true);
    expect(shouldCheck(at(ALICE), "interval", ctx(T0 + 10, { fetching: true }))).toBe(false);
  });

  it("refresh always checks, even a fresh answer and with a check in flight", () => {
    expect(shouldCheck(at(ALICE), "refresh", ctx(T0 + 1, { fetching: true }))).toBe(true);
  });

  it("after a failure the answer stays stale, so focus and mount retry", () => {
    const s = failed(at(ALICE));
    expect(shouldCheck(s, "focus", ctx(T0 + WHOAMI_STALE_MS))).toBe(true);
    expect(shouldCheck(failed(INITIAL_AUTH_STATE), "mount", ctx(T0))).toBe(true);
  });
});

describe("answers and failures", () => {
  it("a failure keeps the previous answer and raises error", () => {
    const s = failed(at(ALICE));
    expect(s.me).toBe(ALICE);
    expect(s.error).toBe(true);
    expect(s.updatedAt).toBe(T0);
    expect(failed(INITIAL_AUTH_STATE)).toMatchObject({ me: undefined, error: true });
    expect(failed(s)).toBe(s);
  });

  it("an answer clears the error (signed out counts as an answer)", () => {
    const s = answered(failed(at(ALICE)), null, T0 + 5);
    expect(s).toMatchObject({ me: null, error: false, updatedAt: T0 + 5, invalidated: false });
  });

  it("answers leave /auth/methods alone, and methods leave the answer alone", () => {
    const methods: AuthMethods = { password: true, oidc: true, signInRequired: true };
    const s = methodsAnswered(at(ALICE), methods);
    expect(s.me).toBe(ALICE);
    expect(answered(s, null, T0 + 1).methods).toBe(methods);
  });

  it("/auth/methods loads once: not when known, not twice at once", () => {
    expect(shouldLoadMethods(INITIAL_AUTH_STATE, false)).toBe(true);
    expect(shouldLoadMethods(INITIAL_AUTH_STATE, true)).toBe(false);
    expect(shouldLoadMethods(methodsAnswered(INITIAL_AUTH_STATE, { password: true, oidc: false, signInRequired: true }), false)).toBe(
      false,
    );
  });
});

describe("attemptWithRetries", () => {
  const noSleep = async (): Promise<void> => {};

  it("backs off 1 s, then 2 s", () => {
    expect([0, 1, 2, 10].map(retryDelay)).toEqual([1000, 2000, 4000, 30_000]);
  });

  it("retries twice, then fails", async () => {
    let calls = 0;
    const waits: number[] = [];
    const r = await attemptWithRetries(
      async () => {
        calls++;
        throw new TypeError("Failed to fetch");
      },
      () => true,
      async (ms) => void waits.push(ms),
    );
    expect(r).toEqual({ kind: "failed" });
    expect(calls).toBe(AUTH_RETRIES + 1);
    expect(waits).toEqual([1000, 2000]);
  });

  it("a retry that succeeds answers", async () => {
    let calls = 0;
    const r = await attemptWithRetries(
      async () => {
        if (++calls < 3) throw new Error("down");
        return ALICE;
      },
      () => true,
      noSleep,
    );
    expect(r).toEqual({ kind: "ok", value: ALICE });
  });

  it("a superseded attempt never answers and stops retrying", async () => {
    let current = true;
    let calls = 0;
    const ok = await attemptWithRetries(
      async () => {
        current = false;
        return ALICE;
      },
      () => current,
      noSleep,
    );
    expect(ok).toEqual({ kind: "superseded" });
    current = true;
    const retried = await attemptWithRetries(
      async () => {
        calls++;
        throw new Error("down");
      },
      () => current,
      async () => {
        current = false;
      },
    );
    expect(retried).toEqual({ kind: "superseded" });
    expect(calls).toBe(1);
  });
});
