// The outage banner's source, end to end: a console in front of an external
// runtime reports it reachable at GET /status/runtime, names it (address) as
// unreachable when the runtime goes away while the console keeps serving, and
// recovers by itself when a runtime listens on that address again.
import net from "node:net";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { RunningRuntime } from "@/lib/runtime";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { startTestRuntime, tempDir, waitFor } from "./harness";

const OBSERVER = "ops:observer";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

interface StatusBody {
  reachable: boolean | null;
  kind: string;
  address: string;
  sinceMs: number;
  error: string;
}

async function status(c: RunningConsole): Promise<StatusBody> {
  const res = await fetch(`${c.url}/status/runtime`, { cache: "no-store" });
  expect(res.status).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  return (await res.json()) as StatusBody;
}

let rt: RunningRuntime | undefined;
let consoleApp: RunningConsole | undefined;
afterAll(async () => {
  await consoleApp?.close();
  await rt?.close();
});

describe("runtime outage", () => {
  it("is reported with the runtime's address while the console keeps serving, and recovers by itself", async () => {
    const port = await freePort();
    const runtimeEnv = { MACP_BIND_ADDR: `127.0.0.1:${port}`, MACP_DEV_OBSERVERS: OBSERVER };
    rt = await startTestRuntime(runtimeEnv);
    const env = {
      PORT: "0",
      BATON_REQUIRE_SIGN_IN: "0",
      MACP_RUNTIME_URL: rt.url,
      MACP_RUNTIME_TOKEN: OBSERVER,
      BATON_DATA_DIR: tempDir("baton-outage-console-"),
    };
    consoleApp = await startConsole({ config: loadConsoleConfig(env, ["--no-ui"], process.cwd()), env, logger: pino({ level: "silent" }) });
    const c = consoleApp;

    await waitFor(async () => (await status(c)).reachable === true, 10_000, "runtime reachable at start");
    const up = await status(c);
    expect(up).toMatchObject({ kind: "external", address: `127.0.0.1:${port}`, error: "" });

    // The runtime goes away: the console says which part is down, and where.
    const downAt = Date.now();
    await rt.close();
    rt = undefined;
    await waitFor(async () => (await status(c)).reachable === false, 15_000, "outage noticed");
    const down = await status(c);
    expect(down.address).toBe(`127.0.0.1:${port}`);
    expect(down.sinceMs).toBeGreaterThanOrEqual(downAt - 1);
    expect(down.error).not.toBe("");

    // A runtime listens on the same address again: recovered without a restart of the console.
    rt = await startTestRuntime(runtimeEnv);
    await waitFor(async () => (await status(c)).reachable === true, 15_000, "recovered");
    expect((await status(c)).error).toBe("");

    // Only GET is answered.
    const post = await fetch(`${c.url}/status/runtime`, { method: "POST" });
    expect(post.status).toBe(405);
  }, 60_000);
});
