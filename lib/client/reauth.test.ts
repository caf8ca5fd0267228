import { Code, ConnectError, createRouterTransport, createClient } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { needsReauth, reauthInterceptor } from "@/lib/client/reauth";

describe("reauthInterceptor", () => {
  it("recognises the console's sign-in endings", () => {
    expect(needsReauth(new ConnectError("x", Code.Unauthenticated))).toBe(true);
    expect(needsReauth(new ConnectError("x", Code.Aborted, { "x-baton-reauth": "account-changed" }))).toBe(true);
    expect(needsReauth(new ConnectError("x", Code.Aborted))).toBe(false);
    expect(needsReauth(new ConnectError("x", Code.Unavailable))).toBe(false);
    expect(needsReauth(new Error("x"))).toBe(false);
  });

  it("tells the page when a stream or a call ends that way, and passes the error on", async () => {
    let reauths = 0;
    const transport = createRouterTransport(
      (router) =>
        router.service(ConsoleService, {
          async *watchSessionList() {
            yield { item: { case: "heartbeat", value: {} } };
            throw new ConnectError("signed out", Code.Unauthenticated);
          },
          async getGatewayStats() {
            throw new ConnectError("changed", Code.Aborted, { "x-baton-reauth": "account-changed" });
          },
          async getSessionSummary() {
            throw new ConnectError("gone", Code.NotFound);
          },
        }),
      { transport: { interceptors: [reauthInterceptor(() => reauths++)] } },
    );
    const client = createClient(ConsoleService, transport);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const m of client.watchSessionList({})) seen.push(m.item.case ?? "");
      })(),
    ).rejects.toMatchObject({ code: Code.Unauthenticated });
    expect(seen).toEqual(["heartbeat"]);
    expect(reauths).toBe(1);
    await expect(client.getGatewayStats({})).rejects.toMatchObject({ code: Code.Aborted });
    expect(reauths).toBe(2);
    await expect(client.getSessionSummary({ sessionId: "x" })).rejects.toMatchObject({ code: Code.NotFound });
    expect(reauths).toBe(2);
  });
});
