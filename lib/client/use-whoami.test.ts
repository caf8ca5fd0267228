// The sign-in store's fetching rules, with /auth/whoami and /auth/methods
// faked (the hooks themselves are thin useStore + useEffect wrappers).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AuthMethods, WhoAmI } from "@/lib/views/sign-in";

const fetchWhoAmI = vi.fn<(signal?: AbortSignal) => Promise<WhoAmI | null>>();
const fetchAuthMethods = vi.fn<(signal?: AbortSignal) => Promise<AuthMethods>>();

vi.mock("@/lib/views/sign-in", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@/lib/views/sign-in")>()),
  fetchWhoAmI: (signal?: AbortSignal) => fetchWhoAmI(signal),
  fetchAuthMethods: (signal?: AbortSignal) => fetchAuthMethods(signal),
}));

const me = (name: string, csrfToken = `tok-${name}`): WhoAmI => ({
  username: name,
  displayName: name,
  role: "operator",
  participantId: `human:${name}`,
  authMethod: "password",
  mustChangePassword: false,
  csrfToken,
  sessionEndsAt: 0,
});

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Mod = typeof import("@/lib/client/use-whoami");
type Csrf = typeof import("@/lib/client/csrf-store");
let m: Mod;
let csrf: Csrf;

beforeEach(async () => {
  vi.resetModules();
  fetchWhoAmI.mockReset();
  fetchAuthMethods.mockReset();
  m = await import("@/lib/client/use-whoami");
  csrf = await import("@/lib/client/csrf-store");
});

afterEach(() => {
  vi.useRealTimers();
});

describe("the sign-in store", () => {
  it("many checks at once make one request; the answer feeds the CSRF store", async () => {
    fetchWhoAmI.mockResolvedValue(me("alice"));
    await Promise.all([m.checkWhoAmI("mount"), m.checkWhoAmI("mount"), m.checkWhoAmI("focus")]);
    expect(fetchWhoAmI).toHaveBeenCalledTimes(1);
    expect(m.authStore.getState()).toMatchObject({ me: { username: "alice" }, error: false });
    expect(csrf.csrfStore.current()).toBe("tok-alice");
    // Fresh: a later mount does not ask again.
    await m.checkWhoAmI("mount");
    expect(fetchWhoAmI).toHaveBeenCalledTimes(1);
  });

  it("signed out (null) is an answer and clears the CSRF token", async () => {
    fetchWhoAmI.mockResolvedValueOnce(me("alice")).mockResolvedValueOnce(null);
    await m.checkWhoAmI("mount");
    await m.refreshWhoAmI();
    expect(m.authStore.getState().me).toBeNull();
    expect(csrf.csrfStore.current()).toBeUndefined();
  });

  it("a failed re-check keeps the previous answer and raises error, after two retries", async () => {
    vi.useFakeTimers();
    fetchWhoAmI.mockResolvedValueOnce(me("alice")).mockRejectedValue(new TypeError("Failed to fetch"));
    await m.checkWhoAmI("mount");
    const done = m.refreshWhoAmI();
    await vi.runAllTimersAsync();
    await done;
    expect(fetchWhoAmI).toHaveBeenCalledTimes(1 + 3);
    expect(m.authStore.getState()).toMatchObject({ me: { username: "alice" }, error: true });
    expect(csrf.csrfStore.current()).toBe("tok-alice");
    // The next answer clears the error.
    fetchWhoAmI.mockResolvedValue(me("alice", "tok-2"));
    await m.refreshWhoAmI();
    expect(m.authStore.getState()).toMatchObject({ error: false });
    expect(csrf.csrfStore.current()).toBe("tok-2");
  });

  it("a first check that fails leaves `me` unknown, with error", async () => {
    vi.useFakeTimers();
    fetchWhoAmI.mockRejectedValue(new TypeError("Failed to fetch"));
    const done = m.checkWhoAmI("mount");
    expect(m.authStore.getState().error).toBe(false); // not while retrying
    await vi.runAllTimersAsync();
    await done;
    expect(m.authStore.getState()).toMatchObject({ me: undefined, error: true });
  });

  it("set() wins over a check in flight, and feeds the CSRF store", async () => {
    const slow = deferred<WhoAmI | null>();
    fetchWhoAmI.mockReturnValueOnce(slow.promise);
    const check = m.checkWhoAmI("mount");
    m.setWhoAmI(me("bob"));
    expect(csrf.csrfStore.current()).toBe("tok-bob");
    slow.resolve(me("alice"));
    await check;
    expect(m.authStore.getState().me?.username).toBe("bob");
    expect(csrf.csrfStore.current()).toBe("tok-bob");
  });

  it("refresh() asks again even with a check in flight, and only its answer counts", async () => {
    const first = deferred<WhoAmI | null>();
    fetchWhoAmI.mockReturnValueOnce(first.promise).mockResolvedValueOnce(null);
    const check = m.checkWhoAmI("mount");
    await m.refreshWhoAmI();
    first.resolve(me("alice"));
    await check;
    expect(fetchWhoAmI).toHaveBeenCalledTimes(2);
    expect(m.authStore.getState().me).toBeNull();
  });
});
