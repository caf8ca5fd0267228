// Demo scenarios are declarative data: who takes part, which policy to
// register, and a list of steps (actor, action, arguments, expected result).
// One generic player (lib/demo/player.ts) plays any of them.
//
// String arguments may contain `{session:<alias>}`, replaced at play time by
// that session's id (session ids are fresh on every run).

import type { MacpErrorCode } from "@/lib/macp/constants";
import type { PolicyInit } from "@/lib/agent";

export type DemoMode = "handoff" | "task";

/** What a step should produce: an accepted message, or a rejection with this code. */
export type StepExpectation = "ok" | { error: MacpErrorCode };

interface StepBase {
  /** Identity performing the step (one client per identity). */
  actor: string;
  /** Which session of the scenario (default "main"). */
  session?: string;
  expect?: StepExpectation;
  /** Pause before the step at speed 1 (default 1200 ms). */
  pauseMs?: number;
  /** Narration printed before the step; a plain description is generated when absent. */
  say?: string;
}

export type DemoStep =
  | (StepBase & {
      action: "start";
      args: { mode: DemoMode; intent: string; participants: string[]; ttlMs?: number; policy?: string; contextId?: string };
    })
  | (StepBase & {
      action: "offer";
      args: { handoffId: string; to: string; scope: string; reason?: string };
    })
  | (StepBase & {
      action: "context";
      args: {
        handoffId?: string;
        /** A file under lib/demo/runbooks (content type from the extension). */
        file?: string;
        text?: string;
        json?: object;
        contentType?: string;
      };
    })
  | (StepBase & {
      action: "accept";
      args?: { handoffId?: string; taskId?: string; reason?: string };
      /**
       * A person's decision. With --interactive the player waits (up to the
       * timeout) for them to answer from the CLI or console; otherwise this
       * scripted answer is played for them.
       */
      human?: { prompt: string; timeoutMs?: number };
    })
  | (StepBase & {
      action: "decline";
      args?: { handoffId?: string; reason?: string };
      human?: { prompt: string; timeoutMs?: number };
    })
  | (StepBase & {
      action: "request";
      args: { taskId: string; title: string; instructions?: string; to?: string; input?: object | string };
    })
  | (StepBase & { action: "reject"; args?: { taskId?: string; reason?: string } })
  | (StepBase & { action: "update"; args: { taskId?: string; progress: number; message?: string } })
  | (StepBase & { action: "complete"; args: { taskId?: string; summary: string; output?: object | string } })
  | (StepBase & {
      action: "fail";
      args: { taskId?: string; errorCode: string; reason: string; retryable?: boolean };
    })
  | (StepBase & {
      action: "commit";
      /** Without an action, the player commits what the session's projection shows (accepted/declined, completed/failed). */
      args?: { action?: string; reason?: string; authorityScope?: string; outcomePositive?: boolean };
    })
  | (StepBase & { action: "cancel"; args?: { reason?: string } })
  | (StepBase & {
      /** Let scenario time pass: envelope timestamps move forward by `ms` without waiting that long. */
      action: "wait";
      args: { ms: number };
    });

export type DemoAction = DemoStep["action"];

export interface SessionExpectation {
  state: "OPEN" | "RESOLVED" | "CANCELLED" | "EXPIRED" | "SUSPENDED";
  /** Projection phase, e.g. Committed. */
  phase?: string;
  action?: string;
  outcomePositive?: boolean;
  /** Identity that sent the commitment. */
  committedBy?: string;
}

export interface Scenario {
  /** Slug used on the command line, e.g. oncall-rotation. */
  name: string;
  title: string;
  /** One paragraph: what the scenario demonstrates. */
  description: string;
  /** Everyone involved, with a role for the narration. */
  actors: { id: string; role: string }[];
  /** Policies registered before playing (registration is idempotent for identical rules). */
  policies?: PolicyInit[];
  steps: DemoStep[];
  /** Expected end state per session alias. */
  expect: Record<string, SessionExpectation>;
}
