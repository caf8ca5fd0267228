// Shared by the agent-*.test.ts files, which test the agent layer (lib/agent) against the real
// runtime on loopback. Each file starts its own runtime (useAgentRuntime).
import { afterAll, beforeAll } from "vitest";
import { Auth, MacpClient } from "@/lib/agent";
import type { RunningRuntime } from "@/lib/runtime";
import { startTestRuntime } from "../harness";

export const OWNER = "agent://oncall/alice";
export const TARGET = "agent://oncall/bob";
export const BYSTANDER = "agent://oncall/carol";

export let rt: RunningRuntime;
export const clients: MacpClient[] = [];
export function clientAs(id: string, header: "bearer" | "x-macp-agent-id" = "bearer"): MacpClient {
  const c = new MacpClient({ address: rt.address, auth: Auth.devAgent(id, header) });
  clients.push(c);
  return c;
}

/** Starts the runtime before a file's tests; closes its clients and the runtime after them. */
export function useAgentRuntime(): void {
  beforeAll(async () => {
    rt = await startTestRuntime();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await rt?.close();
  });
}

export async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}
