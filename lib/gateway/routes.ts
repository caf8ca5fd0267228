// Baton's browser-facing ConsoleService (proto/baton/v1/console.proto) as a
// plain `(router) => void`, so the same code mounts in the console server
// (connectNodeAdapter) and in createRouterTransport for in-memory tests. In
// the console server every stream here also follows the sign-in it was opened
// with (sign-in-streams.ts, an interceptor on the whole router). Who may call
// is checked before any handler runs, by the access interceptor on the same
// router (request-auth.ts, rules in access-rules.ts): the handlers read the
// reader it signed in (readerOf), or nobody when reads are open.
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { isValidSessionId } from "@/lib/macp/ids";
import { parseListQuery, parsePage } from "./catalog/query";
import type { Gateway } from "./gateway";
import { readerOf } from "./request-auth";
import { sessionStream } from "./session-stream";
import { kCutOffConnection } from "./stream-caps";

/** Validate a session id from a browser request (PROTOCOL.md §2.6). */
export function requireSessionId(raw: string): string {
  if (raw === "") throw new ConnectError("session_id is required", Code.InvalidArgument);
  if (!isValidSessionId(raw)) {
    const shown = raw.length > 80 ? `${raw.slice(0, 80)}…` : raw;
    throw new ConnectError(
      `session_id "${shown}" is not a valid MACP session id (a lowercase UUID v4/v7, or 22+ characters of A-Z a-z 0-9 _ -)`,
      Code.InvalidArgument,
    );
  }
  return raw;
}

/** after_sequence as a JS number; rejects values no session can reach. */
export function requireAfterSequence(raw: bigint): number {
  if (raw < 0n || raw > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ConnectError(`after_sequence ${raw} is out of range`, Code.InvalidArgument);
  }
  return Number(raw);
}

export function consoleRoutes(gateway: Gateway): (router: ConnectRouter) => void {
  return (router) => {
    router.service(ConsoleService, {
      async listSessionPage(req) {
        const query = parseListQuery(req.query);
        const { offset, limit } = parsePage(req.offset, req.limit);
        return gateway.list.pageNamed(query, offset, limit);
      },

      async *watchSessionChanges(req, ctx) {
        const person = readerOf(ctx);
        const query = parseListQuery(req.query);
        yield* gateway.trackBrowserStream(gateway.list.watchChanges(query, ctx.signal), ctx.signal, person);
      },

      async *watchSessionList(_req, ctx) {
        const person = readerOf(ctx);
        yield* gateway.trackBrowserStream(gateway.list.watchList(ctx.signal), ctx.signal, person);
      },

      async *subscribeSession(req, ctx) {
        const person = readerOf(ctx);
        const sessionId = requireSessionId(req.sessionId);
        const after = requireAfterSequence(req.afterSequence);
        const cutOff = ctx.values.get(kCutOffConnection);
        yield* gateway.trackBrowserStream(sessionStream(gateway.streamDeps, sessionId, after, ctx.signal, cutOff), ctx.signal, person);
      },

      async getSessionSummary(req, ctx) {
        const sessionId = requireSessionId(req.sessionId);
        return { summary: await gateway.feeder.summary(sessionId, ctx.signal) };
      },

      async getGatewayStats() {
        const s = gateway.stats();
        return {
          upstreamSubscriptions: s.upstreamSubscriptions,
          browserStreams: s.browserStreams,
          runtimeKind: s.runtimeKind,
          runtimeAddress: s.runtimeAddress,
        };
      },
    });
  };
}
