// Command model of the baton CLI: definitions, the per-run context (global
// options, identity, lazily created clients, output), and the global flags.

import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { Auth, DEFAULT_RUNTIME_ADDRESS, MacpClient, type AuthConfig } from "@/lib/agent";
import { type Flags, UsageError, type FlagDef } from "./args";
import { stateName, toJsonText } from "./format";

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
}

export interface Command {
  /** Words after `baton`, e.g. ["handoff", "offer"]. */
  path: readonly string[];
  summary: string;
  /** Usage line after `baton `. */
  usage: string;
  description?: string;
  flags: readonly FlagDef[];
  examples?: readonly string[];
  /** False for commands that never talk to a runtime as someone (demo, help). */
  needsIdentity?: boolean;
  run(ctx: CommandContext): Promise<number>;
}

export const GLOBAL_FLAGS: readonly FlagDef[] = [
  {
    name: "runtime",
    type: "string",
    value: "<host:port|url>",
    description: "MACP runtime to talk to (default $MACP_RUNTIME_URL or 127.0.0.1:50051)",
  },
  { name: "as", type: "string", value: "<identity>", description: "act as this identity (dev-mode runtimes; default $BATON_AS)" },
  {
    name: "token",
    type: "string",
    value: "<token>",
    description: "bearer token for runtimes with token auth (default $BATON_TOKEN); add --as to name its identity",
  },
  { name: "agent-id-header", type: "boolean", description: "send --as as the legacy x-macp-agent-id header instead of a bearer" },
  { name: "tls", type: "boolean", description: "connect with TLS (implied by https:// or --ca)" },
  { name: "ca", type: "string", value: "<path>", description: "PEM file of the CA to trust for TLS" },
  { name: "json", type: "boolean", description: "machine-readable JSON output" },
  { name: "help", type: "boolean", short: "h", description: "show help for the command" },
];

export interface Globals {
  runtime: string;
  as?: string;
  token?: string;
  agentIdHeader: boolean;
  tls: boolean;
  ca?: string;
  json: boolean;
}

export function readGlobals(flags: Flags, env: Io["env"]): Globals {
  const g: Globals = {
    runtime: flags.str("runtime") ?? (env.MACP_RUNTIME_URL || DEFAULT_RUNTIME_ADDRESS),
    agentIdHeader: flags.bool("agent-id-header"),
    tls: flags.bool("tls"),
    json: flags.bool("json"),
  };
  const as = flags.str("as") ?? (env.BATON_AS || undefined);
  const token = flags.str("token") ?? (env.BATON_TOKEN || undefined);
  if (as !== undefined) g.as = as;
  if (token !== undefined) g.token = token;
  const ca = flags.str("ca") ?? (env.MACP_RUNTIME_CA || undefined);
  if (ca !== undefined) g.ca = ca;
  return g;
}

export class CommandContext {
  private readonly clients: MacpClient[] = [];
  private readonly closers: (() => void)[] = [];

  constructor(
    readonly io: Io,
    readonly globals: Globals,
    readonly flags: Flags,
    /** Positional words after the command path. */
    readonly args: readonly string[],
    readonly command: Command,
  ) {}

  get signal(): AbortSignal {
    return this.io.signal;
  }

  get json(): boolean {
    return this.globals.json;
  }

  /** The acting identity, when known (--as; unknown behind a bare token). */
  get identity(): string | undefined {
    return this.globals.as;
  }

  auth(): AuthConfig {
    if (this.globals.token !== undefined) {
      // With --as too, the token is declared to stand for that identity (used as the envelope sender).
      return this.globals.as !== undefined
        ? Auth.bearer(this.globals.token, { expectedSender: this.globals.as })
        : Auth.bearer(this.globals.token);
    }
    if (this.globals.as !== undefined) return Auth.devAgent(this.globals.as, this.globals.agentIdHeader ? "x-macp-agent-id" : "bearer");
    throw new UsageError("who is acting? pass --as <identity> (dev-mode runtime) or --token <token>", this.command.path);
  }

  /** A client for the global runtime options, as the acting identity (or `auth`). */
  client(auth: AuthConfig = this.auth()): MacpClient {
    const c = new MacpClient({
      address: this.globals.runtime,
      auth,
      tls: this.globals.tls,
      ...(this.globals.ca !== undefined ? { caPath: this.globals.ca } : {}),
      clientName: "baton-cli",
    });
    this.clients.push(c);
    return c;
  }

  out(text: string): void {
    this.io.stdout(text);
  }

  err(text: string): void {
    this.io.stderr(text);
  }

  printJson(value: unknown): void {
    this.io.stdout(toJsonText(value));
  }

  /** Report an accepted Ack: one human line, or a JSON object. */
  reportAck(what: string, ack: Ack, extra: Record<string, unknown> = {}): void {
    if (this.json) {
      this.printJson({
        ok: true,
        session_id: ack.sessionId,
        message_id: ack.messageId,
        duplicate: ack.duplicate,
        session_state: stateName(ack.sessionState),
        ...extra,
      });
      return;
    }
    const dup = ack.duplicate ? " (already accepted earlier: duplicate)" : "";
    this.out(`✓ ${what}: accepted, session ${ack.sessionId} is ${stateName(ack.sessionState)}${dup}\n`);
  }

  /** Run `fn` when the command ends (after success or failure). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  close(): void {
    for (const c of this.clients) c.close();
    this.clients.length = 0;
    for (const fn of this.closers.splice(0)) fn();
  }
}

/** A refusal that carries no MACP registry code (e.g. RegisterPolicy ok=false); exits 2. */
export class Refusal extends Error {
  override name = "Refusal";
}
