import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createAuthResolver, withReservedIdentities } from "./auth";
import { ConfigError, loadConfig } from "./config";

const h = (o: Record<string, string>) => new Headers(o);

describe("dev auth", () => {
  const dev = createAuthResolver({ allowInsecure: true, devObservers: ["baton:console"] });
  it("names the caller from either SDK's header", () => {
    expect(dev.resolve(h({ authorization: "Bearer agent://a" }))?.sender).toBe("agent://a");
    expect(dev.resolve(h({ "x-macp-agent-id": "agent://b" }))?.sender).toBe("agent://b");
    expect(dev.resolve(h({ "x-macp-token": "agent://c" }))?.sender).toBe("agent://c");
    expect(dev.resolve(h({}))).toBeNull();
    expect(dev.resolve(h({ authorization: "Basic x" }))).toBeNull();
  });
  it("makes configured observers read-only", () => {
    const o = dev.resolve(h({ authorization: "Bearer baton:console" }));
    expect(o?.isObserver).toBe(true);
    expect(o?.canStartSessions).toBe(false);
  });
  it("is refused without MACP_ALLOW_INSECURE", () => {
    expect(() => createAuthResolver({ allowInsecure: false, devObservers: [] })).toThrow(ConfigError);
  });
});

describe("token auth", () => {
  it("maps tokens to identities with flags, from JSON or a file", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tok-")), "tokens.json");
    fs.writeFileSync(file, JSON.stringify([{ token: "t2", sender: "bob", allowed_modes: ["macp.mode.task.v1"], max_open_sessions: 2 }]));
    const r = createAuthResolver({
      allowInsecure: true,
      devObservers: [],
      authTokensJson: JSON.stringify({ tokens: [{ token: "t1", sender: "alice", is_observer: true }] }),
      authTokensFile: file,
    });
    expect(r.mode).toBe("tokens");
    expect(r.resolve(h({ authorization: "Bearer t1" }))).toMatchObject({ sender: "alice", isObserver: true });
    expect(r.resolve(h({ authorization: "Bearer t2" }))).toMatchObject({
      sender: "bob",
      allowedModes: ["macp.mode.task.v1"],
      maxOpenSessions: 2,
    });
    expect(r.resolve(h({ "x-macp-agent-id": "alice" }))).toBeNull();
    expect(r.resolve(h({ authorization: "Bearer nope" }))).toBeNull();
  });
  it("rejects malformed token configuration with a clear error", () => {
    const bad = (json: string) => () => createAuthResolver({ allowInsecure: false, devObservers: [], authTokensJson: json });
    expect(bad("{")).toThrow(/not valid JSON/);
    expect(bad('[{"token":"a"}]')).toThrow(/sender/);
    expect(bad('[{"token":"a.b","sender":"x"}]')).toThrow(/JWT/);
    expect(bad('[{"token":"a","sender":"x"},{"token":"a","sender":"y"}]')).toThrow(/duplicate/);
  });
});

describe("config", () => {
  it("parses and validates the environment", () => {
    const c = loadConfig({ MACP_ALLOW_INSECURE: "1", MACP_BIND_ADDR: "0.0.0.0:6000", MACP_MAX_PAYLOAD_BYTES: "2048" });
    expect(c).toMatchObject({ bindHost: "0.0.0.0", bindPort: 6000, maxPayloadBytes: 2048, memoryOnly: false });
    expect(() => loadConfig({})).toThrow(/MACP_ALLOW_INSECURE/);
    expect(() => loadConfig({ MACP_ALLOW_INSECURE: "1", MACP_BIND_ADDR: "nope" })).toThrow(/host:port/);
    expect(() => loadConfig({ MACP_ALLOW_INSECURE: "1", MACP_MAX_PAYLOAD_BYTES: "-3" })).toThrow(/MACP_MAX_PAYLOAD_BYTES/);
    expect(() => loadConfig({ MACP_ALLOW_INSECURE: "maybe" })).toThrow(/MACP_ALLOW_INSECURE/);
    expect(() => loadConfig({ MACP_TLS_CERT_PATH: "/x" })).toThrow(/together/);
  });
});

describe("dev auth with reserved identities (the console's people)", () => {
  const reserved = new Set(["human:alice"]);
  const refused: string[] = [];
  const auth = withReservedIdentities(createAuthResolver({ allowInsecure: true, devObservers: ["baton:console"] }), {
    isReserved: (id) => reserved.has(id),
    delegated: (c) => (c === "delegate-for-alice" ? "human:alice" : null),
    onRefused: (id) => refused.push(id),
    describe: () => "people reserved",
  });

  it("refuses dev credentials naming a reserved identity, whichever header carries them, and says why", () => {
    const variants: Record<string, string>[] = [
      { authorization: "Bearer human:alice" },
      { "x-macp-agent-id": "human:alice" },
      { "x-macp-token": "human:alice" },
    ];
    for (const headers of variants) {
      expect(auth.resolve(h(headers))).toBeNull();
      expect(auth.explain?.(h(headers))).toMatch(/human:alice is a person of the Baton console/);
    }
    expect(refused).toEqual(["human:alice", "human:alice", "human:alice"]);
  });

  it("resolves the delegate credential to the person, and leaves agents and observers as they were", () => {
    expect(auth.resolve(h({ authorization: "Bearer delegate-for-alice" }))).toMatchObject({
      sender: "human:alice",
      isObserver: false,
      canStartSessions: true,
    });
    expect(auth.resolve(h({ authorization: "Bearer agent://a" }))?.sender).toBe("agent://a");
    expect(auth.resolve(h({ "x-macp-agent-id": "agent://b" }))?.sender).toBe("agent://b");
    expect(auth.resolve(h({ authorization: "Bearer baton:console" }))?.isObserver).toBe(true);
    expect(auth.explain?.(h({ authorization: "Bearer agent://a" }))).toBeNull();
    expect(auth.describe()).toMatch(/people reserved/);
  });
});
