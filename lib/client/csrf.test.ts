import { describe, expect, it, vi } from "vitest";
import { createRouterTransport, createClient } from "@connectrpc/connect";
import { ActionService } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { createCsrfStore, csrfInterceptor } from "@/lib/client/csrf";

describe("createCsrfStore", () => {
  it("fetches the token once for concurrent callers and keeps it", async () => {
    const load = vi.fn(async () => "tok");
    const store = createCsrfStore(load);
    expect(store.current()).toBeUndefined();
    expect(await Promise.all([store.get(), store.get(), store.get()])).toEqual(["tok", "tok", "tok"]);
    expect(await store.get()).toBe("tok");
    expect(load).toHaveBeenCalledTimes(1);
    store.invalidate();
    expect(store.current()).toBeUndefined();
    await store.get();
    expect(load).toHaveBeenCalledTimes(2);
  });

  it("survives a failed fetch (signed out) and tries again next time", async () => {
    let n = 0;
    const store = createCsrfStore(async () => {
      n += 1;
      if (n === 1) throw new Error("offline");
      return undefined;
    });
    expect(await store.get()).toBeUndefined();
    expect(await store.get()).toBeUndefined();
    expect(n).toBe(2);
    store.set("");
    expect(store.current()).toBeUndefined();
  });
});

describe("csrfInterceptor", () => {
  it("adds x-baton-csrf to every call, waiting for it only on the ActionService", async () => {
    const seen: { method: string; csrf: string | null }[] = [];
    let release: (t: string) => void = () => undefined;
    const store = createCsrfStore(() => new Promise<string>((resolve) => (release = resolve)));
    const transport = createRouterTransport(
      (router) => {
        router.service(ActionService, {
          async listDirectory(_req, ctx) {
            seen.push({ method: "ListDirectory", csrf: ctx.requestHeader.get("x-baton-csrf") });
            return {};
          },
        });
        router.service(ConsoleService, {
          async getGatewayStats(_req, ctx) {
            seen.push({ method: "GetGatewayStats", csrf: ctx.requestHeader.get("x-baton-csrf") });
            return {};
          },
        });
      },
      { transport: { interceptors: [csrfInterceptor(store, new Set([ActionService.typeName]))] } },
    );
    // A read goes out at once, without a token yet.
    await createClient(ConsoleService, transport).getGatewayStats({});
    // An action waits until the token is known.
    const pending = createClient(ActionService, transport).listDirectory({});
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([{ method: "GetGatewayStats", csrf: null }]);
    release("the-token");
    await pending;
    await createClient(ConsoleService, transport).getGatewayStats({});
    expect(seen).toEqual([
      { method: "GetGatewayStats", csrf: null },
      { method: "ListDirectory", csrf: "the-token" },
      { method: "GetGatewayStats", csrf: "the-token" },
    ]);
  });
});
