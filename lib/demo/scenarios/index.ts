// Every demo scenario, in the order `baton demo` plays them.
import type { Scenario } from "../types";
import { declineReoffer } from "./decline-reoffer";
import { escalationHuman } from "./escalation-human";
import { forbiddenSender } from "./forbidden-sender";
import { implicitAccept } from "./implicit-accept";
import { leadApproval } from "./lead-approval";
import { oncallRotation } from "./oncall-rotation";
import { taskProgress } from "./task-progress";
import { taskRetry } from "./task-retry";

export const SCENARIOS: readonly Scenario[] = [
  oncallRotation,
  declineReoffer,
  escalationHuman,
  implicitAccept,
  leadApproval,
  taskProgress,
  taskRetry,
  forbiddenSender,
];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
