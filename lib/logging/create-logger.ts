// The one way Baton's processes make their logger: JSON lines (for log
// collectors) unless the output is a terminal, where people read it, in which
// case pino-pretty renders one coloured line per record. BATON_LOG_FORMAT
// (`json`, `pretty`, or `auto`, the default) overrides the choice.
import pino, { type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

export type LogFormat = "json" | "pretty";

export class LogFormatError extends Error {
  override name = "LogFormatError";
}

/** Resolve BATON_LOG_FORMAT against whether the output is a terminal. */
export function logFormat(env: Record<string, string | undefined>, isTTY: boolean): LogFormat {
  const raw = (env.BATON_LOG_FORMAT ?? "auto").trim().toLowerCase();
  if (raw === "json" || raw === "pretty") return raw;
  if (raw === "auto" || raw === "") return isTTY ? "pretty" : "json";
  throw new LogFormatError(`BATON_LOG_FORMAT must be json, pretty or auto (got ${JSON.stringify(env.BATON_LOG_FORMAT)})`);
}

export interface CreateLoggerOptions {
  level: string;
  /** Fields on every record (pino's `base`); undefined drops pid and hostname. */
  base?: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Where records go; default stdout. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
}

export function createLogger(options: CreateLoggerOptions): Logger {
  const out = options.destination ?? process.stdout;
  const format = logFormat(options.env ?? process.env, Boolean(out.isTTY));
  const settings = { level: options.level, base: options.base };
  if (format === "json") {
    return options.destination ? pino(settings, options.destination as DestinationStream) : pino(settings);
  }
  // Synchronous: a crash never loses the lines before it, as with pino's default destination.
  const stream = pretty({
    destination: out,
    sync: true,
    colorize: Boolean(out.isTTY),
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    singleLine: true,
  });
  return pino(settings, stream);
}
