import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { canGuard, createSessionManager, guardPing } from "./http2-session";

describe("the keepalive guard", () => {
  it("hooks a step that exists in the installed connect-node", () => {
    expect(canGuard(createSessionManager("http://127.0.0.1:1"))).toBe(true);
  });

  it("answers a ping on a destroyed session with an error instead of throwing", async () => {
    const server = http2.createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    await new Promise<void>((r) => session.once("connect", () => r()));
    session.destroy();
    // Unguarded, Node throws synchronously (what the keepalive timer hits).
    expect(() => session.ping(() => undefined)).toThrow(/destroyed/);
    guardPing(session);
    const err = await new Promise<Error | null>((resolve) => {
      expect(session.ping((e) => resolve(e))).toBe(false);
    });
    expect(err?.message).toMatch(/closed/);
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("leaves a live session's pings alone", async () => {
    const server = http2.createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    await new Promise<void>((r) => session.once("connect", () => r()));
    guardPing(session);
    const err = await new Promise<Error | null>((resolve) => session.ping((e) => resolve(e)));
    expect(err).toBeNull();
    session.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
});
