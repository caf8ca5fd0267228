// In-process unit tests of the CLI plumbing: argument parsing, durations and
// progress, help and usage exit codes, identity handling, formatting. (The CLI
// against a real runtime is covered as separate processes in
// tests/integration/cli.test.ts.)
import { describe, expect, it } from "vitest";
import { Flags, parseDuration, parseProgress, tokenize, UsageError, type FlagDef } from "./args";
import { main, COMMANDS, EXIT } from "./main";
import { formatDuration, jsonSafe, table } from "./format";

function io(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), env, signal: new AbortController().signal },
    out: () => out.join(""),
    err: () => err.join(""),
  };
}

describe("tokenize and Flags", () => {
  const defs: FlagDef[] = [
    { name: "session", type: "string", description: "" },
    { name: "participants", type: "list", description: "" },
    { name: "json", type: "boolean", description: "" },
    { name: "help", type: "boolean", short: "h", description: "" },
  ];
  const isBool = (n: string) => n === "json" || n === "help";

  it("splits positionals and flags in any order, with = and -- forms", () => {
    const raw = tokenize(
      ["--json", "handoff", "--session=abc", "offer", "--participants", "a,b", "--participants", "c", "--", "--literal"],
      isBool,
      { h: "help" },
    );
    expect(raw.positionals).toEqual(["handoff", "offer", "--literal"]);
    const f = new Flags(raw.flags, defs, ["handoff", "offer"]);
    expect(f.bool("json")).toBe(true);
    expect(f.str("session")).toBe("abc");
    expect(f.list("participants")).toEqual(["a", "b", "c"]);
    expect(new Flags(tokenize(["-h"], isBool, { h: "help" }).flags, defs, []).bool("help")).toBe(true);
  });

  it("reports missing values, unknown and repeated options", () => {
    expect(() => tokenize(["--session"], isBool, {})).toThrow(/--session needs a value/);
    expect(() => tokenize(["--session", "--json"], isBool, {})).toThrow(/needs a value/);
    expect(() => tokenize(["--json=maybe"], isBool, {})).toThrow(UsageError);
    expect(() => tokenize(["-x"], isBool, { h: "help" })).toThrow(/unknown option -x/);
    expect(tokenize(["--session=--odd", "-"], isBool, {})).toEqual({ positionals: ["-"], flags: [{ name: "session", value: "--odd" }] });
    expect(() => new Flags([{ name: "sesion", value: "x" }], defs, [])).toThrow(/did you mean --session/);
    expect(
      () =>
        new Flags(
          [
            { name: "session", value: "x" },
            { name: "session", value: "y" },
          ],
          defs,
          [],
        ),
    ).toThrow(/more than once/);
    expect(() => new Flags([], defs, ["x"]).required("session")).toThrow(/--session is required/);
  });

  it("parses durations and progress", () => {
    expect(parseDuration("90s", "--ttl")).toBe(90_000);
    expect(parseDuration("1h", "--ttl")).toBe(3_600_000);
    expect(parseDuration("1.5m", "--ttl")).toBe(90_000);
    expect(parseDuration("250", "--ttl")).toBe(250);
    expect(() => parseDuration("soon", "--ttl")).toThrow(/not a duration/);
    expect(parseProgress("30%")).toBeCloseTo(0.3);
    expect(parseProgress("0.7")).toBeCloseTo(0.7);
    expect(parseProgress("70")).toBeCloseTo(0.7);
    expect(parseProgress("1")).toBe(1);
    expect(() => parseProgress("130%")).toThrow(/between 0% and 100%/);
  });
});

describe("main: help and usage", () => {
  it("prints top-level help (0 with --help, 64 without a command)", async () => {
    const a = io();
    expect(await main(["--help"], a.io)).toBe(EXIT.ok);
    expect(a.out()).toMatch(/^baton: command line for MACP runtimes/);
    const b = io();
    expect(await main([], b.io)).toBe(EXIT.usage);
  });

  it("has --help for every command and group", async () => {
    for (const cmd of COMMANDS) {
      const r = io();
      expect(await main([...cmd.path, "--help"], r.io)).toBe(EXIT.ok);
      expect(r.out()).toContain(`baton ${cmd.path.join(" ")}: ${cmd.summary}`);
      expect(r.out()).toContain("Global options:");
    }
    const g = io();
    expect(await main(["handoff", "--help"], g.io)).toBe(EXIT.ok);
    expect(g.out()).toMatch(/handoff offer\s+offer the responsibility/);
    const h = io();
    expect(await main(["help", "task", "update"], h.io)).toBe(EXIT.ok);
    expect(h.out()).toMatch(/^baton task update:/);
  });

  it("usage errors exit 64 with a pointer to the right help", async () => {
    const a = io();
    expect(await main(["handof", "start"], a.io)).toBe(EXIT.usage);
    expect(a.err()).toMatch(/unknown command "handof" \(did you mean "handoff"\?\)/);
    const b = io();
    expect(await main(["handoff", "acept"], b.io)).toBe(EXIT.usage);
    expect(b.err()).toMatch(/did you mean "handoff accept"/);
    const c = io();
    expect(await main(["handoff", "start", "--participants", "b"], c.io)).toBe(EXIT.usage);
    expect(c.err()).toMatch(/who is acting\? pass --as <identity>/);
    const d = io();
    expect(await main(["--as", "a", "task", "update", "--session", "s", "--progress", "lots"], d.io)).toBe(EXIT.usage);
    expect(d.err()).toMatch(/--progress: "lots" is not a number/);
    expect(d.err()).toMatch(/Run `baton task update --help`/);
    const e = io();
    expect(await main(["--as", "a", "--json", "handoff", "context", "--session", "s"], e.io)).toBe(EXIT.usage);
    expect(JSON.parse(e.out())).toMatchObject({ ok: false, error: { kind: "usage" } });
    const f = io();
    expect(await main(["demo", "no-such-scenario"], f.io)).toBe(EXIT.usage);
    expect(f.err()).toMatch(/unknown scenario no-such-scenario; known: oncall-rotation/);
  });

  it("lists the demo scenarios without a runtime", async () => {
    const r = io();
    expect(await main(["demo", "list"], r.io)).toBe(EXIT.ok);
    expect(r.out()).toMatch(/oncall-rotation\s+On-call rotation, accepted/);
    const j = io();
    expect(await main(["demo", "list", "--json"], j.io)).toBe(EXIT.ok);
    expect((JSON.parse(j.out()) as { scenarios: unknown[] }).scenarios).toHaveLength(8);
  });
});

describe("format", () => {
  it("aligns tables and renders durations and JSON-safe values", () => {
    expect(
      table(
        ["A", "BB"],
        [
          ["xyz", "1"],
          ["q", "22"],
        ],
      ),
    ).toBe("A    BB\nxyz  1\nq    22\n");
    expect(formatDuration(5_400_000)).toBe("1h 30m");
    expect(formatDuration(45_000)).toBe("45s");
    expect(jsonSafe({ b: new Uint8Array([104, 105]), n: 5n, u: undefined, l: [1n] })).toEqual({ b: "aGk=", n: 5, l: [1] });
  });
});
