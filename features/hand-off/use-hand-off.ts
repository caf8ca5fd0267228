"use client";
// useHandOff(): the dialog's attempt. An attempt is made when "Hand off" is
// pressed with a new form (attemptFor: the same attempt again while nothing
// definitive came back and the form is unchanged); its ids are fixed from
// then on (features/hand-off/hand-off.ts). Once a step went through, the attempt is
// kept until it is complete: "Finish" sends the rest with the same ids. A
// second press while one is in flight does nothing.
//
// The attempt is also kept in the tab's sessionStorage while it is not
// complete, so a reload in the middle (or a tab restored later) shows what
// was sent and offers to finish the same attempt instead of starting a
// second session.

import { useCallback, useEffect, useRef, useState } from "react";
import { attemptFor, fingerprintOf, newMessageId, type Attempt } from "@/lib/views/action-attempt";
import type { HandOffFields } from "@/lib/client/action-forms";
import { announce } from "@/lib/client/announcer";
import { csrfStore } from "@/lib/client/csrf-store";
import {
  HAND_OFF_STEPS,
  isComplete,
  newProgress,
  progressSentence,
  runHandOff,
  type HandOffPlan,
  type HandOffProgress,
  type HandOffSender,
  type HandOffStep,
} from "@/features/hand-off/hand-off";

const STORAGE_KEY = "baton.handOff.attempt";

function keep(owner: string, plan: HandOffPlan, p: HandOffProgress): void {
  try {
    window.sessionStorage.setItem(
      STORAGE_KEY,
      JSON.stringify({ owner, plan, progress: { attemptId: p.attemptId, sessionId: p.sessionId, done: p.done, duplicates: p.duplicates } }),
    );
  } catch {
    // Storage full or disabled: the attempt still works in memory.
  }
}

function forget(): void {
  try {
    window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing kept
  }
}

const isStep = (x: unknown): x is HandOffStep => typeof x === "string" && (HAND_OFF_STEPS as readonly string[]).includes(x);

/** An interrupted attempt `owner` left in this tab, if any (checked: it is only this page's own data, but storage can be edited). */
function kept(owner: string): { plan: HandOffPlan; progress: HandOffProgress } | undefined {
  try {
    const raw = window.sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return undefined;
    const v = JSON.parse(raw) as { owner?: string; plan?: HandOffPlan; progress?: Partial<HandOffProgress> };
    // Someone else signed in in this tab since: not theirs to finish.
    if (v.owner !== owner) return undefined;
    const plan = v.plan;
    const p = v.progress;
    if (!plan || !p || typeof plan.attemptId !== "string" || p.attemptId !== plan.attemptId || typeof plan.runbook !== "string")
      return undefined;
    if (typeof plan.start !== "object" || typeof plan.offer !== "object" || typeof p.sessionId !== "string") return undefined;
    if (!Array.isArray(p.done) || !p.done.every(isStep) || !Array.isArray(p.duplicates) || !p.duplicates.every(isStep)) return undefined;
    const progress: HandOffProgress = { attemptId: p.attemptId, sessionId: p.sessionId, done: p.done, duplicates: p.duplicates };
    return isComplete(plan, progress) ? undefined : { plan, progress };
  } catch {
    return undefined;
  }
}

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
  /** Give up an interrupted attempt (what was sent stays sent). */
  discard(): void;
}

async function refreshCsrf(): Promise<void> {
  csrfStore.invalidate();
  await csrfStore.get();
}

/** `owner`: the signed-in person's participant id (an interrupted attempt is only restored for them). */
export function useHandOff(owner: string, sender: () => HandOffSender, onDone: (sessionId: string) => void): UseHandOff {
  const attempt = useRef<Attempt | undefined>(undefined);
  const inFlight = useRef(false);
  const [state, setState] = useState<HandOffState>({ pending: false });
  const current = useRef<{ plan: HandOffPlan; progress: HandOffProgress } | undefined>(undefined);
  /** An attempt that was sent (or may have been) and is not complete: only "Finish" or "Discard" go on. */
  const [locked, setLocked] = useState(false);

  useEffect(() => {
    const k = kept(owner);
    if (!k) return;
    current.current = k;
    setLocked(true);
    const lines =
      k.progress.done.length > 0 ? progressSentence(k.plan, k.progress, k.plan.offer.target) : "Nothing is known to have been sent.";
    setState({ pending: false, plan: k.plan, progress: k.progress, sentence: `This hand-off was interrupted. ${lines}` });
  }, [owner]);

  const run = useCallback(
    async (plan: HandOffPlan, from: HandOffProgress, targetName: string): Promise<HandOffProgress> => {
      inFlight.current = true;
      keep(owner, plan, from);
      setState({ pending: true, plan, progress: from });
      const progress = await runHandOff(plan, from, sender(), {
        refreshCsrf,
        onStep: (step) => setState((s) => ({ ...s, step })),
      });
      inFlight.current = false;
      current.current = { plan, progress };
      // A definitive answer to the start ends the attempt (nothing was sent): the next press is a new one.
      const a = attempt.current;
      if (a && (progress.done.length > 0 || (progress.failed && progress.failed.outcome.kind !== "retryable")))
        attempt.current = { ...a, settled: true };
      const over =
        isComplete(plan, progress) ||
        (progress.done.length === 0 && progress.failed !== undefined && progress.failed.outcome.kind !== "retryable");
      if (over) forget();
      else keep(owner, plan, progress);
      setLocked(!over && (progress.done.length > 0 || locked));
      const sentence = progressSentence(plan, progress, targetName);
      setState({ pending: false, plan, progress, sentence });
      announce(sentence);
      if (isComplete(plan, progress)) onDone(progress.sessionId);
      return progress;
    },
    [sender, onDone, locked, owner],
  );

  const submit = useCallback(
    async (fields: HandOffFields, targetName: string) => {
      if (inFlight.current) return undefined;
      const held = current.current;
      if (held && locked) return run(held.plan, held.progress, targetName);
      const a = attemptFor(attempt.current, fingerprintOf(fields), newMessageId);
      attempt.current = a;
      const plan: HandOffPlan = { attemptId: a.messageId, ...fields };
      const from = held && held.plan.attemptId === a.messageId ? held.progress : newProgress(a.messageId);
      return run(plan, from, targetName);
    },
    [run, locked],
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
    if (inFlight.current || locked) return; // locked until finished or discarded
    setState({ pending: false });
  }, [locked]);

  const discard = useCallback(() => {
    if (inFlight.current) return;
    forget();
    current.current = undefined;
    attempt.current = undefined;
    setLocked(false);
    setState({ pending: false });
  }, []);

  return { state, partial: locked, submit, finish, reset, discard };
}
