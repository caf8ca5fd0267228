// Modes this runtime implements. Other standard modes are rejected at
// SessionStart with MODE_NOT_SUPPORTED (PROTOCOL.md §6).
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { handoffMode } from "./handoff";
import { taskMode } from "./task";
import type { ModeHandler } from "./types";

// Each mode keeps its own state shape; the kernel stores it opaquely.
export type AnyMode = ModeHandler<unknown>;

export const MODES: ReadonlyMap<string, AnyMode> = new Map<string, AnyMode>([
  [TASK_MODE, taskMode as AnyMode],
  [HANDOFF_MODE, handoffMode as AnyMode],
]);
