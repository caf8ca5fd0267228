// The console router's access interceptor against real accounts (a users file
// and signed logins): one rule per method, a method without a rule refused,
// the checks in their order, and the caller handed to the handler as a
// context value.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type ConnectRouter } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Accounts } from "@/lib/accounts/accounts";
import { TEST_SCRYPT, hashPassword } from "@/lib/accounts/password";
import { writeUsersFile } from "@/lib/accounts/users-file";
import { ActionService } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { FileHandoffService } from "@/lib/gen/baton/v1/files_pb";
import { RuntimeCatalogService } from "@/lib/gen/baton/v1/runtime_catalog_pb";
import { ACCESS_TABLES, accessRuleFor } from "./access-rules";
import { accessInterceptor, MUST_CHANGE_PASSWORD, NOT_SIGNED_IN, readerOf, signedInOf, type AccessOptions } from "./request-auth";

const SECRET = Buffer.from("a-test-session-secret-that-is-long-enough");
const PASSWORD = "a long enough password";

let dir: string;
let accounts: Accounts;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-access-"));
  const usersFile = path.join(dir, "users.json");
  const passwordHash = await hashPassword(PASSWORD, TEST_SCRYPT);
  await writeUsersFile(usersFile, {
    version: 1,
    users: [
      { username: "vera", displayName: "Vera", role: "viewer", participantId: "human:vera", passwordHash },
      { username: "ada", displayName: "Ada", role: "admin", participantId: "human:ada", passwordHash },
    ],
  });
  accounts = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT, idleMs: 60_000, absoluteMs: 600_000 });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Request headers of a fresh login: the cookie, and the CSRF token when asked. */
async function headersOf(username: string, csrf: boolean): Promise<Record<string, string>> {
  const r = await accounts.login({ username, password: PASSWORD, ip: "10.0.0.1" });
  if (!r.ok) throw new Error(r.reason);
  const cookie = `baton_session=${r.cookieValue}`;
  const auth = await accounts.authenticate({ cookie });
  if (!auth) throw new Error("not signed in");
  return csrf ? { cookie, "x-baton-csrf": auth.login.csrfToken } : { cookie };
}

/** A few real methods whose handlers report whom the interceptor signed in. */
function routes(router: ConnectRouter): void {
  router.service(ConsoleService, {
    getGatewayStats: (_req, ctx) => ({ runtimeAddress: readerOf(ctx) ?? "(open)" }),
  });
  router.service(ActionService, {
    getCapabilities: (_req, ctx) => ({ demoUnavailableReason: signedInOf(ctx).user.username }),
    controlDemo: (_req, ctx) => ({ state: { paused: signedInOf(ctx).user.role === "admin" } }),
  });
  router.service(RuntimeCatalogService, { async *watchListRows() {} });
}

function clients(options: Partial<AccessOptions> = {}) {
  const transport = createRouterTransport(routes, {
    router: {
      interceptors: [accessInterceptor({ auth: { accounts, env: {} }, requireSignInToRead: true, isClosed: () => false, ...options })],
    },
  });
  return {
    console: createClient(ConsoleService, transport),
    actions: createClient(ActionService, transport),
    catalog: createClient(RuntimeCatalogService, transport),
  };
}

async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("the call was not refused");
}

describe("access rules", () => {
  it("every method of every console service has a rule", () => {
    expect(ACCESS_TABLES.map((t) => t.service.typeName).sort()).toEqual(
      [ActionService.typeName, ConsoleService.typeName, FileHandoffService.typeName].sort(),
    );
    for (const { service } of ACCESS_TABLES) {
      for (const m of service.methods) expect(accessRuleFor(service.typeName, m.name), `${service.typeName}/${m.name}`).toBeDefined();
    }
    expect(ActionService.methods.length).toBeGreaterThan(20);
  });

  it("state-changing actions check CSRF; admin calls need the admin role", () => {
    expect(accessRuleFor(ActionService.typeName, "Offer")).toEqual({ signIn: "always", csrf: true });
    expect(accessRuleFor(ActionService.typeName, "RunDemo")).toEqual({ signIn: "always", csrf: true, minimumRole: "admin" });
    expect(accessRuleFor(ActionService.typeName, "ListWebhookDeliveries")).toEqual({ signIn: "always", csrf: false, minimumRole: "admin" });
    expect(accessRuleFor(ConsoleService.typeName, "SubscribeSession")).toEqual({ signIn: "reads", csrf: false });
    expect(accessRuleFor(ActionService.typeName, "NoSuchMethod")).toBeUndefined();
  });
});

describe("accessInterceptor", () => {
  it("refuses a method that has no rule", async () => {
    const e = await refusal(
      (async () => {
        for await (const _ of clients().catalog.watchListRows({})) void _;
      })(),
    );
    expect(e.code).toBe(Code.PermissionDenied);
    expect(e.message).toContain("has no access rule");
  });

  it("refuses a call without a sign-in, and hands the signed-in caller to the handler", async () => {
    const { actions } = clients();
    const e = await refusal(actions.getCapabilities({}));
    expect(e.code).toBe(Code.Unauthenticated);
    expect(e.rawMessage).toBe(NOT_SIGNED_IN);
    const ok = await actions.getCapabilities({}, { headers: await headersOf("vera", false) });
    expect(ok.demoUnavailableReason).toBe("vera");
  });

  it("checks CSRF, then the role", async () => {
    const { actions } = clients();
    const noToken = await refusal(actions.controlDemo({}, { headers: await headersOf("ada", false) }));
    expect(noToken.code).toBe(Code.PermissionDenied);
    expect(noToken.rawMessage).toMatch(/^Request refused \(CSRF check\)/);
    const viewer = await refusal(actions.controlDemo({}, { headers: await headersOf("vera", true) }));
    expect(viewer.code).toBe(Code.PermissionDenied);
    expect(viewer.rawMessage).toBe("This needs the admin role; your account is viewer.");
    const ok = await actions.controlDemo({}, { headers: await headersOf("ada", true) });
    expect(ok.state?.paused).toBe(true);
  });

  it("reads are open when the console does not require sign-in to read, and need one when it does", async () => {
    expect((await clients({ requireSignInToRead: false }).console.getGatewayStats({})).runtimeAddress).toBe("(open)");
    expect((await clients({ auth: null }).console.getGatewayStats({})).runtimeAddress).toBe("(open)");
    expect((await refusal(clients().console.getGatewayStats({}))).code).toBe(Code.Unauthenticated);
    expect((await clients().console.getGatewayStats({}, { headers: await headersOf("vera", false) })).runtimeAddress).toBe("vera");
    // Without accounts nobody can sign in for the calls that always need it.
    expect((await refusal(clients({ auth: null }).actions.getCapabilities({}))).code).toBe(Code.Unauthenticated);
  });

  it("refuses with UNAVAILABLE while shutting down, before any sign-in check, except the gateway stats", async () => {
    const closing = clients({ isClosed: () => true });
    const e = await refusal(closing.actions.getCapabilities({}));
    expect(e.code).toBe(Code.Unavailable);
    expect(e.rawMessage).toBe("the console is shutting down");
    expect((await closing.console.getGatewayStats({}, { headers: await headersOf("vera", false) })).runtimeAddress).toBe("vera");
  });

  it("a one-time password allows nothing until it is changed", async () => {
    await writeUsersFile(path.join(dir, "users.json"), {
      version: 1,
      users: [
        {
          username: "otto",
          displayName: "Otto",
          role: "operator",
          participantId: "human:otto",
          passwordHash: await hashPassword(PASSWORD, TEST_SCRYPT),
          mustChangePassword: true,
        },
      ],
    });
    const e = await refusal(clients().actions.getCapabilities({}, { headers: await headersOf("otto", false) }));
    expect(e.code).toBe(Code.FailedPrecondition);
    expect(e.rawMessage).toBe(MUST_CHANGE_PASSWORD);
  });
});
