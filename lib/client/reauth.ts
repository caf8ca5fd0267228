// When the console ends a call because the sign-in behind it ended or the
// account changed (lib/gateway/sign-in-streams.ts: UNAUTHENTICATED, or
// ABORTED with `x-baton-reauth`), the page asks /auth/whoami again at once:
// a signed-out person is sent to the sign-in page, and a changed role shows
// in the header and the buttons, instead of waiting for the next periodic
// check. Streams themselves reconnect (ABORTED) or stop (UNAUTHENTICATED) as
// the stream runner decides.

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export const REAUTH_HEADER = "x-baton-reauth";

/** Does this error mean "your sign-in is not what it was"? */
export function needsReauth(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  return error.code === Code.Unauthenticated || error.metadata.get(REAUTH_HEADER) !== null;
}

async function* watched<T>(source: AsyncIterable<T>, onReauth: () => void): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (e) {
    if (needsReauth(e)) onReauth();
    throw e;
  }
}

/** Calls `onReauth` when a call or a stream ends with such an error (the error still reaches the caller). */
export function reauthInterceptor(onReauth: () => void): Interceptor {
  return (next) => async (req) => {
    let res;
    try {
      res = await next(req);
    } catch (e) {
      if (needsReauth(e)) onReauth();
      throw e;
    }
    if (!res.stream) return res;
    return { ...res, message: watched(res.message, onReauth) };
  };
}
