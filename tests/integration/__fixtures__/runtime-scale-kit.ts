// Shared by the runtime-scale-*.test.ts files. History at scale: what the runtime holds and reads
// is bounded by what is in use, not by history. Restart reads only open sessions; history is
// replayed from storage page by page with no gap before live delivery; a subscriber that stops
// reading holds a bounded buffer and is cut off past it; each identity holds a limited number of
// streams. Assertions are on behaviour and counts (what the store was asked to read, what buffers
// hold), not on time.
import fs from "node:fs";
import type { RunningRuntime } from "@/lib/runtime";
import { startTestRuntime } from "../harness";

export const dirs: string[] = [];
const running: RunningRuntime[] = [];
/** Closes the runtimes a test started and removes its folders; every runtime-scale-*.test.ts runs it afterEach. */
export async function cleanUp(): Promise<void> {
  for (const rt of running.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export async function start(env: Record<string, string> = {}): Promise<RunningRuntime> {
  const rt = await startTestRuntime(env);
  running.push(rt);
  return rt;
}

export async function stop(rt: RunningRuntime): Promise<void> {
  running.splice(running.indexOf(rt), 1);
  await rt.close();
}
