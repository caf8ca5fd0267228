// Mapping upstream (runtime) failures to errors a browser can act on.
import { Code, ConnectError } from "@connectrpc/connect";

export function isAbortError(err: unknown): boolean {
  if (err instanceof ConnectError) return err.code === Code.Canceled;
  return err instanceof Error && err.name === "AbortError";
}

/**
 * A ConnectError for the browser from an upstream failure while doing `what`.
 * NOT_FOUND and PERMISSION_DENIED pass through; a rejected gateway credential
 * is reported as a server configuration problem; everything else means the
 * runtime is unavailable right now (the browser may retry / resume).
 */
export function upstreamError(err: unknown, what: string): ConnectError {
  const ce = ConnectError.from(err);
  switch (ce.code) {
    case Code.NotFound:
      return new ConnectError(`${what}: ${ce.rawMessage}`, Code.NotFound);
    case Code.PermissionDenied:
      return new ConnectError(
        `${what}: the console's runtime identity may not read this session (it must be an observer): ${ce.rawMessage}`,
        Code.PermissionDenied,
      );
    case Code.Unauthenticated:
      return new ConnectError(
        `${what}: the runtime rejected the console's credentials (check MACP_RUNTIME_TOKEN): ${ce.rawMessage}`,
        Code.Unavailable,
      );
    case Code.ResourceExhausted:
      return new ConnectError(`${what}: the runtime ended a slow subscription; resubscribe from the last sequence`, Code.Unavailable);
    case Code.InvalidArgument:
    case Code.OutOfRange:
      return new ConnectError(`${what}: ${ce.rawMessage}`, ce.code);
    case Code.Canceled:
      return new ConnectError(`${what}: cancelled`, Code.Canceled);
    default:
      return new ConnectError(`${what}: MACP runtime unavailable: ${ce.rawMessage}`, Code.Unavailable);
  }
}
