// The baton CLI's arguments: node:util's parseArgs splits them (`--flag value`,
// `--flag=value`, boolean flags, `-h`, `--` to end flag parsing; flags may
// appear before or after the command words); `Flags` checks them against the
// command's definitions (repeatable list flags, also comma-separated; "did you
// mean"; required values) and reads them typed.
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {
  override name = "UsageError";
  /** Command path whose help should be pointed at, e.g. ["handoff", "offer"]. */
  readonly command: readonly string[];
  constructor(message: string, command: readonly string[] = []) {
    super(message);
    this.command = command;
  }
}

/** `list`: repeatable, each value also split on commas; `multi`: repeatable, values kept whole (e.g. --context k=v). */
export type FlagType = "boolean" | "string" | "list" | "multi";

export interface FlagDef {
  name: string;
  type: FlagType;
  /** Placeholder shown in help, e.g. "<id>". */
  value?: string;
  description: string;
  /** Single-letter alias without the dash. */
  short?: string;
}

export interface RawArgs {
  positionals: string[];
  /** In order of appearance; booleans carry `true` (or an explicit =true/=false). */
  flags: { name: string; value: string | boolean }[];
}

/**
 * Split argv into positionals and flags with node:util's parseArgs. `isBoolean`
 * tells whether a flag takes no value (so `--json handoff` does not swallow
 * `handoff`); the flags' meaning is checked afterwards by `Flags`, per command.
 */
export function tokenize(argv: readonly string[], isBoolean: (name: string) => boolean, shortNames: Record<string, string>): RawArgs {
  // parseArgs needs each option's type up front: declare the ones this argv names.
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const arg of argv) {
    if (arg === "--") break;
    if (!arg.startsWith("--") || arg.length <= 2) continue;
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    options[name] = { type: isBoolean(name) ? "boolean" : "string", multiple: true };
  }
  for (const [short, long] of Object.entries(shortNames)) {
    options[long] = { ...(options[long] ?? { type: isBoolean(long) ? "boolean" : "string", multiple: true }), short };
  }
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });
  const positionals: string[] = [];
  const flags: RawArgs["flags"] = [];
  for (const t of tokens) {
    if (t.kind === "positional") positionals.push(t.value);
    else if (t.kind === "option") {
      const short = !t.rawName.startsWith("--");
      if (short && !Object.hasOwn(shortNames, t.rawName.slice(1))) throw new UsageError(`unknown option ${t.rawName}`);
      if (isBoolean(t.name)) {
        if (t.inlineValue) {
          if (t.value !== "true" && t.value !== "false") throw new UsageError(`--${t.name} takes no value (or =true/=false)`);
          flags.push({ name: t.name, value: t.value === "true" });
        } else flags.push({ name: t.name, value: true });
      } else {
        // A value that looks like a flag is a missing value, not the value.
        if (t.value === undefined || (!t.inlineValue && t.value.startsWith("--") && t.value.length > 2)) {
          throw new UsageError(`${t.rawName} needs a value`);
        }
        flags.push({ name: t.name, value: t.value });
      }
    }
  }
  return { positionals, flags };
}

/** Parsed flags of one command, validated against its definitions. */
export class Flags {
  private readonly values = new Map<string, string | boolean | string[]>();

  constructor(
    raw: RawArgs["flags"],
    defs: readonly FlagDef[],
    private readonly command: readonly string[],
  ) {
    const byName = new Map(defs.map((d) => [d.name, d]));
    for (const { name, value } of raw) {
      const def = byName.get(name);
      if (!def) {
        const hint = suggest(name, [...byName.keys()]);
        throw new UsageError(`unknown option --${name}${hint ? ` (did you mean --${hint}?)` : ""}`, command);
      }
      if (def.type === "boolean") {
        this.values.set(name, value === true);
      } else if (def.type === "multi") {
        const prev = (this.values.get(name) as string[] | undefined) ?? [];
        this.values.set(name, [...prev, String(value)]);
      } else if (def.type === "list") {
        const prev = (this.values.get(name) as string[] | undefined) ?? [];
        const items = String(value)
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "");
        this.values.set(name, [...prev, ...items]);
      } else {
        if (this.values.has(name)) throw new UsageError(`--${name} given more than once`, command);
        this.values.set(name, String(value));
      }
    }
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  bool(name: string): boolean {
    return this.values.get(name) === true;
  }

  str(name: string): string | undefined {
    const v = this.values.get(name);
    return typeof v === "string" ? v : undefined;
  }

  /** A string flag that must be present and non-empty. */
  required(name: string): string {
    const v = this.str(name);
    if (v === undefined || v.trim() === "") throw new UsageError(`--${name} is required`, this.command);
    return v;
  }

  list(name: string): string[] {
    const v = this.values.get(name);
    return Array.isArray(v) ? v : [];
  }
}

/** Closest known name within edit distance 2, for "did you mean". */
export function suggest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j] as number;
      prev[j] = Math.min((prev[j] as number) + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length] as number;
}

/** Parse "90s", "15m", "1h", "2d", "500ms" or a bare number of milliseconds. */
export function parseDuration(text: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!m) throw new UsageError(`${what}: "${text}" is not a duration (examples: 500ms, 90s, 15m, 1h)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? "ms").toLowerCase();
  const factor = unit === "ms" ? 1 : unit === "s" ? 1_000 : unit === "m" ? 60_000 : unit === "h" ? 3_600_000 : 86_400_000;
  return Math.round(n * factor);
}

/** Parse "30%", "0.3" or "30" (read as a percentage) into a 0..1 fraction. */
export function parseProgress(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%)?\s*$/.exec(text);
  if (!m) throw new UsageError(`--progress: "${text}" is not a number (examples: 30%, 0.3)`);
  const n = Number(m[1]);
  const fraction = m[2] === "%" || n > 1 ? n / 100 : n;
  if (fraction < 0 || fraction > 1) throw new UsageError(`--progress must be between 0% and 100%, got ${text}`);
  return fraction;
}
