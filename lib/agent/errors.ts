// Errors raised by the agent layer. A runtime that *answers* with a MACP error
// (a rejected Ack, an inline stream error) becomes a MacpError carrying the
// registry code; a runtime that cannot be reached, or that fails an RPC with a
// gRPC status, surfaces as the ConnectError that @connectrpc/connect raised.

import { Code, ConnectError } from "@connectrpc/connect";
import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { ERROR_CODES, ERROR_EXPLANATIONS, normalizeErrorCode, type MacpErrorCode } from "@/lib/macp/constants";

/** Plain-language explanation of a registry code, or undefined for unknown codes. */
export function explainError(code: string): string | undefined {
  return (ERROR_CODES as readonly string[]).includes(code) ? ERROR_EXPLANATIONS[code as MacpErrorCode] : undefined;
}

/** Base class: a MACP-level refusal with a registry code. */
export class MacpError extends Error {
  override name = "MacpError";
  /** Registry code (e.g. FORBIDDEN), normalised from display names; unknown codes are kept verbatim. */
  readonly code: MacpErrorCode | string;
  /** The runtime's own text. */
  readonly runtimeMessage: string;

  constructor(code: string, runtimeMessage: string) {
    const normalized = normalizeErrorCode(code);
    super(`${normalized}: ${runtimeMessage || "rejected by the runtime"}`);
    this.code = normalized;
    this.runtimeMessage = runtimeMessage;
  }

  /** Plain-language explanation from the registry, when the code is known. */
  get explanation(): string | undefined {
    return explainError(this.code);
  }
}

/** A Send (or Cancel/Suspend/Resume) answered with `ok=false`. */
export class MacpAckError extends MacpError {
  override name = "MacpAckError";
  readonly ack: Ack;

  constructor(ack: Ack) {
    super(ack.error?.code ?? "INTERNAL_ERROR", ack.error?.message ?? "");
    this.ack = ack;
  }

  /** Structured denial reasons (POLICY_DENIED carries `{"reasons":[...]}` in details). */
  get reasons(): string[] {
    const details = this.ack.error?.details;
    if (!details || details.length === 0) return [];
    try {
      const parsed: unknown = JSON.parse(new TextDecoder().decode(details));
      const reasons = (parsed as { reasons?: unknown }).reasons;
      return Array.isArray(reasons) ? reasons.filter((r): r is string => typeof r === "string") : [];
    } catch {
      return [];
    }
  }
}

/** An inline `StreamSessionResponse.error` (the stream stays usable on the runtime side). */
export class MacpStreamError extends MacpError {
  override name = "MacpStreamError";
  readonly sessionId: string;
  readonly messageId: string;

  constructor(code: string, message: string, sessionId = "", messageId = "") {
    super(code, message);
    this.sessionId = sessionId;
    this.messageId = messageId;
  }
}

/** Thrown locally before anything is sent (bad arguments, missing identity…). */
export class MacpUsageError extends Error {
  override name = "MacpUsageError";
}

/**
 * Registry code implied by a gRPC status on session RPCs (GetSession, Cancel,
 * subscribe…), which report refusals as statuses rather than Acks (§7.2).
 */
export function codeForConnectError(err: ConnectError): MacpErrorCode | undefined {
  const head = normalizeErrorCode(err.rawMessage);
  if ((ERROR_CODES as readonly string[]).includes(head)) return head as MacpErrorCode;
  switch (err.code) {
    case Code.Unauthenticated:
      return "UNAUTHENTICATED";
    case Code.PermissionDenied:
      return "FORBIDDEN";
    case Code.NotFound:
      return "SESSION_NOT_FOUND";
    case Code.AlreadyExists:
      return "SESSION_ALREADY_EXISTS";
    default:
      return undefined;
  }
}

/** Whether resending the same envelope (same message_id) could help. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof MacpError) return err.code === "INTERNAL_ERROR";
  if (err instanceof ConnectError) return err.code === Code.Unavailable;
  return false;
}
