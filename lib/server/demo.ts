// Admins' "Run demo" in the console: plays one of the protocol demo scenarios
// (lib/demo/scenarios) server-side against the runtime with the same player
// `npm run demo` uses, and reports its narration as RunDemo stream messages.
//
// The demo's actors are agent identities (agent://…, human://…) that the
// player presents to the runtime with dev auth, exactly as `npm run demo`
// does, so a demo can only be played where dev auth is on: the embedded
// runtime on loopback without tokens. Anywhere else RunDemo is refused with
// the reason (GetCapabilities tells the browser beforehand).
//
// A run keeps going when the browser stops reading (closing the tab must not
// leave a half-played session behind); at most MAX_RUNS play at once. While
// it plays, ControlDemo pauses, steps or re-paces it by its run id, and every
// step's answer (refusals included: the runtime does not broadcast those) is
// streamed as DemoStepPlayed.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { DemoControl, type ControlSnapshot } from "@/lib/demo/control";
import { DemoPlayer } from "@/lib/demo/player";
import { SCENARIOS, findScenario } from "@/lib/demo/scenarios";
import {
  DemoControlAction,
  DemoControlStateSchema,
  DemoScenarioSchema,
  RunDemoResponseSchema,
  type DemoControlState,
  type DemoScenario,
  type RunDemoResponse,
} from "@/lib/gen/baton/v1/actions_pb";
import { AsyncQueue } from "@/lib/base/async-queue";
import type { GatewayLogger } from "@/lib/gateway/logger";

export const MAX_DEMO_RUNS = 2;
export const MAX_DEMO_SPEED = 20;
/** Heartbeats on a run's stream (a paused run is otherwise silent). */
export const DEMO_HEARTBEAT_MS = 15_000;

/** What RunDemo needs from the console server (see lib/gateway/action-routes.ts). */
export interface DemoService {
  /** Null when demos can be played here, else a sentence saying why not. */
  unavailableReason(): string | null;
  scenarios(): DemoScenario[];
  /**
   * Start a run; its progress is the returned stream, which ends when the run
   * does or when `signal` (the reader) aborts; the run itself goes on. Throws
   * ConnectErrors for bad input.
   */
  run(input: {
    scenario: string;
    speed: number;
    instant: boolean;
    startPaused?: boolean;
    requestedBy: string;
    signal?: AbortSignal;
  }): AsyncIterable<RunDemoResponse>;
  /** Pause, resume, step or re-pace a playing run. Throws NOT_FOUND once it has ended, INVALID_ARGUMENT for bad input. */
  control(input: { runId: string; action: DemoControlAction; speed: number; instant: boolean }): DemoControlState;
  /** Stop every run (console shutdown). */
  close(): void;
}

function controlState(s: ControlSnapshot): DemoControlState {
  return create(DemoControlStateSchema, {
    paused: s.paused,
    played: s.played,
    speed: s.pace === "instant" ? 0 : s.pace,
    instant: s.pace === "instant",
  });
}

export interface DemoServiceOptions {
  /** The runtime's gRPC address (host:port). */
  address: string;
  tls: boolean;
  caPath?: string;
  /** Demos need dev auth; otherwise this is the reason shown to admins. */
  unavailable: string | null;
  logger: GatewayLogger;
}

export function parseDemoSpeed(speed: number, instant: boolean): number | "instant" {
  if (instant) return "instant";
  if (speed === 0) return 1;
  if (!Number.isFinite(speed) || speed < 0.25 || speed > MAX_DEMO_SPEED) {
    throw new ConnectError(`speed must be between 0.25 and ${MAX_DEMO_SPEED} (1 = a pace people can follow)`, Code.InvalidArgument);
  }
  return speed;
}

export function createDemoService(options: DemoServiceOptions): DemoService {
  let running = 0;
  const shutdown = new AbortController();
  const runs = new Map<string, DemoControl>();

  return {
    unavailableReason: () => options.unavailable,

    scenarios: () =>
      SCENARIOS.map((s) => create(DemoScenarioSchema, { name: s.name, title: s.title, description: s.description, steps: s.steps.length })),

    run({ scenario: name, speed, instant, startPaused, requestedBy, signal }) {
      if (options.unavailable !== null) throw new ConnectError(options.unavailable, Code.FailedPrecondition);
      const scenario = findScenario(name);
      if (!scenario) {
        throw new ConnectError(
          `unknown scenario "${name.slice(0, 80)}"; known: ${SCENARIOS.map((s) => s.name).join(", ")}`,
          Code.InvalidArgument,
        );
      }
      const pace = parseDemoSpeed(speed, instant);
      if (running >= MAX_DEMO_RUNS) {
        throw new ConnectError(`${running} demos are already playing; wait for one to finish`, Code.ResourceExhausted);
      }
      running += 1;
      const queue = new AsyncQueue<RunDemoResponse>();
      // The reader left: stop collecting progress; the run finishes on its own.
      signal?.addEventListener("abort", () => queue.close(), { once: true });
      const say = (item: MessageInitShape<typeof RunDemoResponseSchema>["item"]): void =>
        void queue.push(create(RunDemoResponseSchema, { item }));
      const runId = globalThis.crypto.randomUUID();
      const control = new DemoControl(pace, (snapshot) => say({ case: "control", value: controlState(snapshot) }), {
        paused: startPaused === true,
      });
      runs.set(runId, control);
      // A paused run may send nothing for minutes: heartbeats keep its stream
      // within the console's idle timeout, as every other stream does.
      const heartbeat = setInterval(() => say({ case: "heartbeat", value: { serverTimeUnixMs: BigInt(Date.now()) } }), DEMO_HEARTBEAT_MS);
      heartbeat.unref();
      say({ case: "started", value: { runId, steps: scenario.steps.length } });
      say({ case: "control", value: controlState(control.snapshot) });
      const player = new DemoPlayer({
        control,
        onStepPlayed: (p) =>
          say({
            case: "step",
            value: {
              index: p.index,
              sessionId: p.sessionId,
              actor: p.actor,
              action: p.action,
              result: p.result,
              runtimeMessage: p.runtimeMessage,
              explanation: p.explanation,
              asExpected: p.asExpected,
              atUnixMs: BigInt(p.atMs),
            },
          }),
        address: options.address,
        tls: options.tls,
        ...(options.caPath !== undefined ? { caPath: options.caPath } : {}),
        speed: pace,
        signal: shutdown.signal,
        log: (line) => say({ case: "line", value: line }),
        onSessionStarted: (s) => say({ case: "session", value: { alias: s.alias, sessionId: s.sessionId } }),
      });
      options.logger.info({ scenario: name, speed: pace, by: requestedBy }, "demo run started from the console");
      const t0 = Date.now();
      void player
        .play(scenario)
        .then(
          (result) => {
            say({ case: "finished", value: { passed: result.passed, problems: result.problems, durationMs: BigInt(result.durationMs) } });
            options.logger.info({ scenario: name, passed: result.passed }, "demo run finished");
          },
          (err: unknown) => {
            const message = err instanceof Error ? err.message : String(err);
            say({ case: "finished", value: { passed: false, problems: [message], durationMs: BigInt(Date.now() - t0) } });
            options.logger.warn({ scenario: name, err: message }, "demo run failed");
          },
        )
        .finally(() => {
          clearInterval(heartbeat);
          running -= 1;
          runs.delete(runId);
          // A paused run released by the shutdown signal ends; nothing else waits on it.
          control.resume();
          player.close();
          queue.close();
        });
      return queue;
    },

    control({ runId, action, speed, instant }) {
      const control = runs.get(runId);
      if (!control)
        throw new ConnectError("No demo is playing with this run id (it has finished, or the console restarted).", Code.NotFound);
      switch (action) {
        case DemoControlAction.PAUSE:
          control.pause();
          break;
        case DemoControlAction.RESUME:
          control.resume();
          break;
        case DemoControlAction.STEP:
          if (!control.step()) throw new ConnectError("The demo is not paused: pause it first, then step.", Code.FailedPrecondition);
          break;
        case DemoControlAction.SET_PACE:
          control.setPace(parseDemoSpeed(speed, instant));
          break;
        default:
          throw new ConnectError("action: one of pause, resume, step or set_pace", Code.InvalidArgument);
      }
      return controlState(control.snapshot);
    },

    close() {
      shutdown.abort();
      for (const c of runs.values()) c.resume();
    },
  };
}
