import { describe, expect, it } from "vitest";
import { loadConsoleConfig } from "./config";
import { planEmbeddedRuntime } from "./embedded";

describe("planEmbeddedRuntime", () => {
  it("defaults to dev auth on loopback, data in ./data/runtime, console as an observer", () => {
    const plan = planEmbeddedRuntime({}, "/repo");
    expect(plan.authMode).toBe("dev");
    expect(plan.token).toBe("baton:console");
    expect(plan.env.MACP_ALLOW_INSECURE).toBe("1");
    expect(plan.env.MACP_DATA_DIR).toBe("/repo/data/runtime");
    expect(plan.env.MACP_DEV_OBSERVERS).toBe("baton:console");
  });

  it("keeps the user's observers and settings", () => {
    const plan = planEmbeddedRuntime({ MACP_DEV_OBSERVERS: "ops, audit", MACP_DATA_DIR: "/var/baton", MACP_ALLOW_INSECURE: "0" }, "/repo");
    expect(plan.env.MACP_DEV_OBSERVERS).toBe("ops,audit,baton:console");
    expect(plan.env.MACP_DATA_DIR).toBe("/var/baton");
    expect(plan.env.MACP_ALLOW_INSECURE).toBe("0");
  });

  it("does not allow plaintext by default on a non-loopback bind", () => {
    const plan = planEmbeddedRuntime({ MACP_BIND_ADDR: "0.0.0.0:50051" }, "/repo");
    expect(plan.env.MACP_ALLOW_INSECURE).toBeUndefined();
  });

  it("adds a per-process observer token when static tokens are configured", () => {
    const user = JSON.stringify({ tokens: [{ token: "t1", sender: "agent://a" }] });
    const plan = planEmbeddedRuntime({ MACP_AUTH_TOKENS_JSON: user }, "/repo");
    expect(plan.authMode).toBe("tokens");
    expect(plan.token).not.toContain(".");
    const parsed = JSON.parse(plan.env.MACP_AUTH_TOKENS_JSON ?? "") as { tokens: Record<string, unknown>[] };
    expect(parsed.tokens).toHaveLength(2);
    expect(parsed.tokens[1]).toMatchObject({ token: plan.token, sender: "baton:console", is_observer: true, can_start_sessions: false });
    expect(planEmbeddedRuntime({ MACP_AUTH_TOKENS_JSON: user }, "/repo").token).not.toBe(plan.token);

    const fileOnly = planEmbeddedRuntime({ MACP_AUTH_TOKENS_FILE: "/etc/tokens.json" }, "/repo");
    expect(JSON.parse(fileOnly.env.MACP_AUTH_TOKENS_JSON ?? "")).toEqual([
      { token: fileOnly.token, sender: "baton:console", is_observer: true, can_start_sessions: false },
    ]);
  });
});

describe("loadConsoleConfig", () => {
  it("defaults to 127.0.0.1:3000 with the embedded runtime", () => {
    const c = loadConsoleConfig({}, [], "/repo");
    expect(c).toMatchObject({ host: "127.0.0.1", port: 3000, dev: false, ui: true, runtime: { kind: "embedded" }, graceMs: 2000 });
    expect(loadConsoleConfig({ PORT: "8080", HOST: "0.0.0.0" }, ["--dev", "--no-ui"], "/repo")).toMatchObject({
      host: "0.0.0.0",
      port: 8080,
      dev: true,
      ui: false,
    });
  });

  it("uses an external runtime only with an observer token", () => {
    expect(() => loadConsoleConfig({ MACP_RUNTIME_URL: "http://rt:50051" }, [], "/repo")).toThrow(/MACP_RUNTIME_TOKEN/);
    expect(() => loadConsoleConfig({ MACP_RUNTIME_URL: "grpc://rt:50051", MACP_RUNTIME_TOKEN: "t" }, [], "/repo")).toThrow(/http/);
    expect(() => loadConsoleConfig({ MACP_RUNTIME_TOKEN: "t" }, [], "/repo")).toThrow(/MACP_RUNTIME_URL/);
    const c = loadConsoleConfig(
      { MACP_RUNTIME_URL: "https://rt.example:50051", MACP_RUNTIME_TOKEN: "t", MACP_RUNTIME_CA_PATH: "/ca.pem" },
      [],
      "/repo",
    );
    expect(c.runtime).toEqual({ kind: "external", url: "https://rt.example:50051", token: "t", caPath: "/ca.pem" });
  });

  it("requires sign-in for reads unless BATON_REQUIRE_SIGN_IN=0", () => {
    expect(loadConsoleConfig({}, [], "/repo").requireSignIn).toBe(true);
    expect(loadConsoleConfig({ BATON_REQUIRE_SIGN_IN: "" }, [], "/repo").requireSignIn).toBe(true);
    expect(loadConsoleConfig({ BATON_REQUIRE_SIGN_IN: "false" }, [], "/repo").requireSignIn).toBe(false);
    expect(loadConsoleConfig({ BATON_REQUIRE_SIGN_IN: "1" }, [], "/repo").requireSignIn).toBe(true);
    expect(loadConsoleConfig({ BATON_REQUIRE_SIGN_IN: "0" }, [], "/repo").requireSignIn).toBe(false);
    expect(() => loadConsoleConfig({ BATON_REQUIRE_SIGN_IN: "yes" }, [], "/repo")).toThrow(/BATON_REQUIRE_SIGN_IN/);
    expect(loadConsoleConfig({ MACP_MAX_PAYLOAD_BYTES: "2048" }, [], "/repo").maxPayloadBytes).toBe(2048);
  });

  it("rejects bad numbers with the variable's name", () => {
    expect(() => loadConsoleConfig({ PORT: "http" }, [], "/repo")).toThrow(/PORT/);
    expect(() => loadConsoleConfig({ BATON_STREAM_GRACE_MS: "-1" }, [], "/repo")).toThrow(/BATON_STREAM_GRACE_MS/);
  });
});
