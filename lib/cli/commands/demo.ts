// `baton demo [list | <scenario>…]`: play the protocol demos against a runtime.

import fs from "node:fs";
import { DemoPlayer, type ScenarioResult } from "@/lib/demo/player";
import { findScenario, SCENARIOS } from "@/lib/demo/scenarios";
import { parseDuration, UsageError } from "../args";
import type { Command } from "../command";
import { table, wrap } from "../format";

function parseSpeed(text: string | undefined): number | "instant" {
  if (text === undefined) return 1;
  if (text === "instant") return "instant";
  const n = Number(text.replace(/x$/i, ""));
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--speed must be a positive number or "instant", got "${text}"`, ["demo"]);
  return n;
}

function readTokens(file: string | undefined): Record<string, string> | undefined {
  if (file === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new UsageError(`cannot read --tokens ${file}: ${(e as Error).message}`, ["demo"]);
  }
  if (
    parsed === null ||
    typeof parsed !== "object" ||
    Array.isArray(parsed) ||
    !Object.values(parsed).every((v) => typeof v === "string")
  ) {
    throw new UsageError(`--tokens ${file} must be a JSON object mapping identity → token`, ["demo"]);
  }
  return parsed as Record<string, string>;
}

function resultJson(r: ScenarioResult): Record<string, unknown> {
  return {
    scenario: r.scenario.name,
    passed: r.passed,
    problems: r.problems,
    duration_ms: r.durationMs,
    steps: r.steps.map((s) => ({
      index: s.index,
      actor: s.actor,
      action: s.action,
      session: s.session,
      expected: s.expected === "ok" ? "ok" : s.expected.error,
      result: s.result,
      matched: s.matched,
      ...(s.answeredBy ? { answered_by: s.answeredBy } : {}),
    })),
    sessions: Object.fromEntries(
      Object.entries(r.sessions).map(([alias, o]) => [
        alias,
        {
          session_id: o.sessionId,
          mode: o.mode,
          state: o.state,
          phase: o.handoff?.phase ?? o.task?.phase,
          action: o.commitment?.action ?? null,
          outcome_positive: o.commitment?.outcomePositive ?? null,
          committed_by: o.commitment?.sender ?? null,
          events: o.events.length,
        },
      ]),
    ),
  };
}

export const demoCommand: Command = {
  path: ["demo"],
  summary: "play the protocol demos (all, or the named ones) with narration",
  usage: "demo [list | <scenario>…] [--speed <n>|instant] [--interactive] [--human-timeout 2m] [--tokens <file.json>]",
  description:
    "Each scenario is data (who does what, what should happen); one player acts every part with its own client " +
    "identity and narrates. Sessions get fresh ids on every run. The default pace leaves time to follow along in the " +
    "console; --speed 4 plays four times faster, --speed instant without pauses. With --interactive, steps played by " +
    "a person (the escalation) wait for that person to answer with `baton … handoff accept|decline`. Against a runtime " +
    "with token auth, --tokens maps each identity to its token. Exits 1 if any scenario did not go as scripted.",
  flags: [
    { name: "speed", type: "string", value: "<n|instant>", description: "pace multiplier (default 1 = human pace)" },
    { name: "interactive", type: "boolean", description: "wait for real people on human steps" },
    { name: "human-timeout", type: "string", value: "<duration>", description: "how long to wait for a person (default 2m)" },
    { name: "tokens", type: "string", value: "<file.json>", description: '{"identity": "token", …} for token-auth runtimes' },
  ],
  examples: ["npm run demo", "npm run demo -- lead-approval --speed 2", "baton demo escalation-human --interactive"],
  needsIdentity: false,
  async run(ctx) {
    const names = [...ctx.args];
    if (names[0] === "list") {
      if (names.length > 1) throw new UsageError("`demo list` takes no further arguments", ctx.command.path);
      if (ctx.json) {
        ctx.printJson({ scenarios: SCENARIOS.map((s) => ({ name: s.name, title: s.title, description: s.description })) });
        return 0;
      }
      ctx.out(
        table(
          ["SCENARIO", "WHAT IT SHOWS"],
          SCENARIOS.map((s) => [s.name, s.title]),
        ),
      );
      ctx.out("\n");
      for (const s of SCENARIOS) ctx.out(`${s.name}\n${wrap(s.description, 92, "  ")}\n\n`);
      return 0;
    }
    const unknown = names.filter((n) => !findScenario(n));
    if (unknown.length) {
      throw new UsageError(`unknown scenario ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`, ctx.command.path);
    }
    const chosen = names.length ? names.map((n) => findScenario(n)).filter((s) => s !== undefined) : [...SCENARIOS];
    const humanTimeout = ctx.flags.str("human-timeout");
    const tokens = readTokens(ctx.flags.str("tokens"));
    const narrate = ctx.json ? (line: string) => ctx.err(`${line}\n`) : (line: string) => ctx.out(`${line}\n`);
    const player = new DemoPlayer({
      address: ctx.globals.runtime,
      tls: ctx.globals.tls,
      ...(ctx.globals.ca !== undefined ? { caPath: ctx.globals.ca } : {}),
      ...(tokens ? { tokens } : {}),
      speed: parseSpeed(ctx.flags.str("speed")),
      interactive: ctx.flags.bool("interactive"),
      ...(humanTimeout !== undefined ? { humanTimeoutMs: parseDuration(humanTimeout, "--human-timeout") } : {}),
      log: narrate,
      signal: ctx.signal,
    });
    try {
      narrate(`Playing ${chosen.length} scenario${chosen.length === 1 ? "" : "s"} against ${ctx.globals.runtime}\n`);
      const results = await player.playAll(chosen);
      const failed = results.filter((r) => !r.passed);
      if (ctx.json) ctx.printJson({ passed: failed.length === 0 && results.length === chosen.length, results: results.map(resultJson) });
      narrate(
        `\n${results.length - failed.length}/${chosen.length} scenarios played as scripted` +
          (failed.length ? `; not as scripted: ${failed.map((r) => r.scenario.name).join(", ")}` : ""),
      );
      if (ctx.signal.aborted) return 130;
      return failed.length === 0 && results.length === chosen.length ? 0 : 1;
    } finally {
      player.close();
    }
  },
};
