"use client";
// Admins' "Run demo": pick a scenario from lib/demo/scenarios and a pace; the
// console server plays it against the runtime (RunDemo) while the narration
// streams in here, beside the session it is playing, live. Pause, Step and the
// pace work while it plays (ControlDemo); refused steps (the runtime does not
// broadcast refusals) show in that session's timeline as local annotations.

import Link from "next/link";
import { lazy, Suspense, useEffect, useRef, useState, type FormEvent } from "react";
import { roleAtLeast } from "@/lib/authz/roles";
import { outcomeOfError, outcomeSentence } from "@/lib/views/action-attempt";
import { announce } from "@/lib/client/announcer";
import { applyDemoMessage, DEMO_SPEEDS, EMPTY_DEMO_RUN, paceValueOf, refusalOfStep, type DemoRunState } from "@/features/admin/demo-run";
import { recordRefusal } from "@/lib/client/refusals";
import { DemoControlAction } from "@/lib/gen/baton/v1/actions_pb";
import { sessionHref } from "@/lib/views/route-params";
import { actionClient } from "@/lib/client/transport";
import { useCapabilities } from "@/lib/client/use-console-data";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { Button, Field, Select } from "@/components/ui/forms";

// The live session beside the script: the session page's screen, loaded when a run starts one.
const LiveSessionScreen = lazy(() => import("@/features/session/LiveSessionScreen").then((m) => ({ default: m.LiveSessionScreen })));

export function DemoRunner() {
  const { me } = useWhoAmI();
  const admin = Boolean(me && roleAtLeast(me.role, "admin"));
  const caps = useCapabilities(admin);
  const [scenario, setScenario] = useState("");
  const [speed, setSpeed] = useState("2");
  const [run, setRun] = useState<DemoRunState | null>(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [startPaused, setStartPaused] = useState(false);
  const reader = useRef<AbortController | null>(null);

  // Refused steps become local annotations of their session's timeline.
  useEffect(() => {
    if (!run?.runId) return;
    for (const step of run.steps) {
      const r = refusalOfStep(run.runId, step);
      if (r) recordRefusal(r);
    }
  }, [run?.runId, run?.steps]);

  useEffect(() => () => reader.current?.abort(), []);
  useEffect(() => {
    if (scenario === "" && caps?.demoScenarios[0]) setScenario(caps.demoScenarios[0].name);
  }, [caps, scenario]);

  if (!me) return null;
  if (!admin) {
    return (
      <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="demo-not-admin">
        Only admins can run demos.
      </p>
    );
  }
  if (!caps) return <p className="text-sm text-slate-700 dark:text-slate-300">Loading the scenarios…</p>;

  const chosen = caps.demoScenarios.find((s) => s.name === scenario);
  const pace = DEMO_SPEEDS.find((s) => s.value === speed) ?? DEMO_SPEEDS[1];

  const start = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (running || !chosen || !pace) return;
    setRunning(true);
    setError(null);
    setRun(EMPTY_DEMO_RUN);
    const ac = new AbortController();
    reader.current = ac;
    let state = EMPTY_DEMO_RUN;
    try {
      for await (const m of actionClient().runDemo(
        { scenario: chosen.name, speed: pace.speed, instant: pace.instant, startPaused },
        { signal: ac.signal },
      )) {
        state = applyDemoMessage(state, m);
        setRun(state);
      }
      announce(state.finished?.passed ? `Demo ${chosen.title} finished as scripted.` : `Demo ${chosen.title} did not go as scripted.`);
    } catch (err) {
      if (!ac.signal.aborted) {
        const sentence = outcomeSentence(outcomeOfError(err), "Demo started");
        setError(sentence);
        announce(sentence);
      }
    } finally {
      setRunning(false);
    }
  };

  const live = running && run?.runId !== undefined && !run.finished;
  const control = async (action: DemoControlAction, paceValue?: string): Promise<void> => {
    if (!run?.runId) return;
    const p = paceValue !== undefined ? DEMO_SPEEDS.find((x) => x.value === paceValue) : undefined;
    setError(null);
    try {
      // The run's stream reports the new state (a control message), in order with the steps.
      await actionClient().controlDemo({ runId: run.runId, action, speed: p?.speed ?? 0, instant: p?.instant ?? false });
      if (action === DemoControlAction.PAUSE) announce("Demo paused before its next step.");
      if (action === DemoControlAction.RESUME) announce("Demo resumed.");
    } catch (err) {
      const sentence = outcomeSentence(outcomeOfError(err), "Done");
      setError(sentence);
      announce(sentence);
    }
  };
  const onPace = (value: string): void => {
    setSpeed(value);
    if (live) void control(DemoControlAction.SET_PACE, value);
  };
  const paused = run?.control?.paused === true;
  const current = run?.sessions.at(-1);

  return (
    <div className="space-y-4 xl:grid xl:grid-cols-[minmax(0,30rem)_minmax(0,1fr)] xl:items-start xl:gap-6 xl:space-y-0">
      <div className="space-y-4">
        {!caps.demoAvailable ? (
          <p
            className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50"
            data-testid="demo-unavailable"
          >
            {caps.demoUnavailableReason}
          </p>
        ) : null}
        <form onSubmit={(e) => void start(e)} className="space-y-4" data-testid="demo-form">
          <div className="grid gap-4 sm:grid-cols-2">
            <Field id="demo-scenario" label="Scenario">
              <Select id="demo-scenario" value={scenario} onChange={(e) => setScenario(e.currentTarget.value)}>
                {caps.demoScenarios.map((s) => (
                  <option key={s.name} value={s.name}>
                    {s.title}
                  </option>
                ))}
              </Select>
            </Field>
            <Field id="demo-speed" label="Pace">
              <Select
                id="demo-speed"
                value={live && run?.control ? paceValueOf(run.control) : speed}
                onChange={(e) => onPace(e.currentTarget.value)}
              >
                {DEMO_SPEEDS.map((s) => (
                  <option key={s.value} value={s.value}>
                    {s.label}
                  </option>
                ))}
              </Select>
            </Field>
          </div>
          {chosen ? (
            <p className="text-sm text-slate-700 dark:text-slate-300">
              <span className="font-mono text-xs">{chosen.name}</span> · {chosen.steps} steps. {chosen.description}
            </p>
          ) : null}
          <label className="flex items-center gap-2 text-sm">
            <input
              type="checkbox"
              checked={startPaused}
              onChange={(e) => setStartPaused(e.currentTarget.checked)}
              className="h-4 w-4"
              data-testid="demo-start-paused"
            />
            Start paused, to go step by step
          </label>
          <div className="flex flex-wrap items-center gap-2">
            <Button
              type="submit"
              variant="primary"
              pending={running}
              aria-disabled={running || !caps.demoAvailable ? true : undefined}
              data-testid="run-demo"
            >
              <Icon name="play" /> {running ? "Playing…" : "Run demo"}
            </Button>
            {live ? (
              <>
                <Button
                  type="button"
                  onClick={() => void control(paused ? DemoControlAction.RESUME : DemoControlAction.PAUSE)}
                  data-testid={paused ? "demo-resume" : "demo-pause"}
                >
                  {paused ? "Resume" : "Pause"}
                </Button>
                <Button
                  type="button"
                  onClick={() => void control(DemoControlAction.STEP)}
                  aria-disabled={!paused ? true : undefined}
                  title={paused ? "Play the next step, then hold" : "Pause first, then step"}
                  data-testid="demo-step"
                >
                  Step
                </Button>
                <span className="text-sm text-slate-700 dark:text-slate-300" role="status" data-testid="demo-position">
                  {run?.control ? `Step ${run.control.played} of ${run.totalSteps}${paused ? " · paused" : ""}` : null}
                </span>
              </>
            ) : null}
          </div>
        </form>
        {error ? (
          <p role="alert" className="text-sm font-medium text-red-800 dark:text-red-300" data-testid="demo-error">
            {error}
          </p>
        ) : null}
        {run ? (
          <section aria-labelledby="demo-progress" className="space-y-2" data-testid="demo-run">
            <h2 id="demo-progress" className="text-base font-semibold">
              {run.finished ? (run.finished.passed ? "Played as scripted" : "Did not go as scripted") : "Playing…"}
            </h2>
            {run.sessions.length > 0 ? (
              <ul className="flex flex-wrap gap-2 text-sm">
                {run.sessions.map((s) => (
                  <li key={s.sessionId}>
                    <Link
                      href={sessionHref(s.sessionId)}
                      className="font-medium text-blue-800 underline dark:text-sky-300"
                      data-testid="demo-session-link"
                    >
                      Open session “{s.alias}”
                    </Link>
                  </li>
                ))}
              </ul>
            ) : null}
            <div role="log" aria-label="Demo narration">
              {/* Scrolls, so it takes focus for the keyboard (axe: scrollable-region-focusable). */}
              <pre
                // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
                tabIndex={0}
                className="max-h-[36rem] overflow-auto rounded-md bg-slate-100 p-3 font-mono text-xs whitespace-pre-wrap text-slate-900 dark:bg-slate-900 dark:text-slate-100"
              >
                {run.lines.join("\n")}
              </pre>
            </div>
          </section>
        ) : null}
      </div>
      {run && current ? (
        <section
          aria-label={`Session “${current.alias}”, live`}
          className="min-w-0 rounded-md border border-slate-200 p-3 dark:border-slate-800"
          data-testid="demo-live-session"
        >
          <Suspense fallback={<p className="text-sm text-slate-700 dark:text-slate-300">Loading the session…</p>}>
            <LiveSessionScreen key={current.sessionId} sessionId={current.sessionId} preview={null} />
          </Suspense>
        </section>
      ) : null}
    </div>
  );
}
