"use client";
// useAction(): runs one ActionService call for a form with the attempt rules
// of lib/views/action-attempt.ts — one message_id per attempt, reused when
// the same attempt is retried; a second submit while one is in flight (double
// click, Enter twice) does nothing; a CSRF refusal refreshes the token and
// retries once with the same id. The outcome sentence goes to the page's
// aria-live announcer and is returned for the form to show.

import { useCallback, useContext, useRef, useState } from "react";
import type { ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import {
  attemptFor,
  fingerprintOf,
  isCsrfRefusal,
  newMessageId,
  outcomeOfError,
  outcomeOfResult,
  outcomeSentence,
  settle,
  type ActionOutcome,
  type Attempt,
} from "@/lib/views/action-attempt";
import { announce } from "@/lib/client/announcer";
import { csrfStore } from "@/lib/client/csrf-store";
import { recordRefusal, RefusalScope } from "@/lib/client/refusals";

export interface ActionState {
  pending: boolean;
  outcome?: ActionOutcome;
  /** What to show (and what was announced). */
  sentence?: string;
  /** The message_id of the current or last attempt. */
  messageId?: string;
}

export interface UseAction {
  state: ActionState;
  /**
   * Submit: `fields` identify the attempt (same fields + no definitive answer
   * yet = same message_id); `call` sends with the given message_id.
   */
  submit(fields: unknown, call: (messageId: string) => Promise<ActionResult>): Promise<ActionOutcome | undefined>;
  /** Forget the last outcome (the form was edited or closed). */
  reset(): void;
}

async function run(call: (messageId: string) => Promise<ActionResult>, messageId: string): Promise<ActionOutcome> {
  try {
    return outcomeOfResult(await call(messageId));
  } catch (e) {
    return outcomeOfError(e);
  }
}

/** `done` is the success sentence without a full stop, e.g. "Offer sent to Bob Ito". */
export function useAction(done: string, onOk?: (outcome: Extract<ActionOutcome, { kind: "ok" }>) => void): UseAction {
  const attempt = useRef<Attempt | undefined>(undefined);
  const inFlight = useRef(false);
  const [state, setState] = useState<ActionState>({ pending: false });
  // Inside a session's action panel, a refused attempt is noted in its timeline.
  const scope = useContext(RefusalScope);

  const submit = useCallback(
    async (fields: unknown, call: (messageId: string) => Promise<ActionResult>) => {
      if (inFlight.current) return undefined;
      inFlight.current = true;
      const a = attemptFor(attempt.current, fingerprintOf(fields), newMessageId);
      attempt.current = a;
      setState({ pending: true, messageId: a.messageId });
      let outcome = await run(call, a.messageId);
      if (isCsrfRefusal(outcome)) {
        csrfStore.invalidate();
        await csrfStore.get();
        outcome = await run(call, a.messageId);
      }
      attempt.current = settle(a, outcome);
      inFlight.current = false;
      const sentence = outcomeSentence(outcome, done);
      setState({ pending: false, outcome, sentence, messageId: a.messageId });
      announce(sentence);
      if (outcome.kind === "ok") onOk?.(outcome);
      if (scope && (outcome.kind === "rejected" || outcome.kind === "denied")) {
        recordRefusal({
          id: a.messageId,
          sessionId: scope.sessionId,
          atMs: Date.now(),
          actor: scope.actor,
          attempt: done,
          code: outcome.kind === "rejected" ? outcome.code : "FORBIDDEN",
          explanation: outcome.kind === "rejected" ? [outcome.explanation, outcome.detail].filter(Boolean).join(" ") : outcome.reason,
          source: outcome.kind === "rejected" ? "runtime" : "console",
        });
      }
      return outcome;
    },
    [done, onOk, scope],
  );

  const reset = useCallback(() => {
    if (!inFlight.current) setState({ pending: false });
  }, []);

  return { state, submit, reset };
}
