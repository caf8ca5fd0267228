"use client";
// useHandOff(): the dialog's attempt. An attempt is made when "Hand off" is
// pressed with a new form (attemptFor: the same attempt again while nothing
// definitive came back and the form is unchanged); its ids are fixed from
// then on (lib/client/hand-off.ts). Once a step went through, the attempt is
// kept until it is complete: "Finish" sends the rest with the same ids. A
// second press while one is in flight does nothing.

import { useCallback, useRef, useState } from "react";
import { attemptFor, fingerprintOf, newMessageId, type Attempt } from "@/lib/client/action-attempt";
import type { HandOffFields } from "@/lib/client/action-forms";
import { announce } from "@/lib/client/announcer";
import { csrfStore } from "@/lib/client/csrf-store";
import { isComplete, isPartial, newProgress, progressSentence, runHandOff, type HandOffPlan, type HandOffProgress, type HandOffSender, type HandOffStep } from "@/lib/client/hand-off";

export interface HandOffState {
  pending: boolean;
  /** The step being sent. */
  step?: HandOffStep;
  plan?: HandOffPlan;
  progress?: HandOffProgress;
  sentence?: string;
}

export interface UseHandOff {
  state: HandOffState;
  /** Something went through and something did not: the form is locked and "Finish" sends the rest. */
  partial: boolean;
  /** Start (or retry) an attempt with the form's fields; resolves with the progress. */
  submit(fields: HandOffFields, targetName: string): Promise<HandOffProgress | undefined>;
  /** Send what the locked attempt has not sent yet. */
  finish(targetName: string): Promise<HandOffProgress | undefined>;
  /** Forget a finished or never-started attempt (the form was edited). */
  reset(): void;
}

async function refreshCsrf(): Promise<void> {
  csrfStore.invalidate();
  await csrfStore.get();
}

export function useHandOff(sender: () => HandOffSender, onDone: (sessionId: string) => void): UseHandOff {
  const attempt = useRef<Attempt | undefined>(undefined);
  const inFlight = useRef(false);
  const [state, setState] = useState<HandOffState>({ pending: false });
  const current = useRef<{ plan: HandOffPlan; progress: HandOffProgress } | undefined>(undefined);

  const run = useCallback(
    async (plan: HandOffPlan, from: HandOffProgress, targetName: string): Promise<HandOffProgress> => {
      inFlight.current = true;
      setState({ pending: true, plan, progress: from });
      const progress = await runHandOff(plan, from, sender(), {
        refreshCsrf,
        onStep: (step) => setState((s) => ({ ...s, step })),
      });
      inFlight.current = false;
      current.current = { plan, progress };
      // A definitive answer to the start ends the attempt (nothing was sent): the next press is a new one.
      const a = attempt.current;
      if (a && (progress.done.length > 0 || (progress.failed && progress.failed.outcome.kind !== "retryable"))) attempt.current = { ...a, settled: true };
      const sentence = progressSentence(plan, progress, targetName);
      setState({ pending: false, plan, progress, sentence });
      announce(sentence);
      if (isComplete(plan, progress)) onDone(progress.sessionId);
      return progress;
    },
    [sender, onDone],
  );

  const submit = useCallback(
    async (fields: HandOffFields, targetName: string) => {
      if (inFlight.current) return undefined;
      const held = current.current;
      if (held && isPartial(held.plan, held.progress)) return run(held.plan, held.progress, targetName);
      const a = attemptFor(attempt.current, fingerprintOf(fields), newMessageId);
      attempt.current = a;
      const plan: HandOffPlan = { attemptId: a.messageId, ...fields };
      const from = held && held.plan.attemptId === a.messageId ? held.progress : newProgress(a.messageId);
      return run(plan, from, targetName);
    },
    [run],
  );

  const finish = useCallback(
    async (targetName: string) => {
      const held = current.current;
      if (inFlight.current || !held) return undefined;
      return run(held.plan, held.progress, targetName);
    },
    [run],
  );

  const reset = useCallback(() => {
    if (inFlight.current) return;
    const held = current.current;
    if (held && isPartial(held.plan, held.progress)) return; // locked until finished
    setState({ pending: false });
  }, []);

  const partial = state.plan !== undefined && state.progress !== undefined && isPartial(state.plan, state.progress);
  return { state, partial, submit, finish, reset };
}
