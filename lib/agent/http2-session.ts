// connect-node's Http2SessionManager with its keepalive made safe.
//
// Upstream bug (connect-es issue #1795, fix proposed in pull request #1797,
// not released for the Node 20 line we pin): the keepalive timer can call
// `ClientHttp2Session.ping()` on a session that was just destroyed (by a
// GOAWAY, an error, an idle close or our own abort) before the manager's
// clean-up stops the timer, and Node throws ERR_HTTP2_INVALID_SESSION from
// that timer: an uncaught exception that ends the process.
//
// The guard wraps `ping` on each session the manager makes ready: on a
// destroyed or closed session it reports an error to the ping callback (which
// the manager ignores, as it does for a cancelled ping) instead of throwing.
// It reaches the session through the manager's `gotoReady` step, which every
// request and connect goes through; a test (http2-session.test.ts) checks that
// this step still exists in the installed connect-node, so an upgrade that
// renames it fails loudly instead of silently dropping the guard. Remove this
// module once connect-node ships the fix.
import type http2 from "node:http2";
import { Http2SessionManager } from "@connectrpc/connect-node";

type PingOptions = ConstructorParameters<typeof Http2SessionManager>[1];
type SessionOptions = ConstructorParameters<typeof Http2SessionManager>[2];
interface Ready {
  conn: http2.ClientHttp2Session;
}
interface Internals {
  gotoReady?: () => Promise<Ready>;
}

const guarded = new WeakSet<http2.ClientHttp2Session>();

/** Make `session.ping` answer a closed or destroyed session with an error instead of throwing. */
export function guardPing(session: http2.ClientHttp2Session): void {
  if (guarded.has(session)) return;
  guarded.add(session);
  const ping = session.ping.bind(session) as (...args: unknown[]) => boolean;
  Object.defineProperty(session, "ping", {
    configurable: true,
    writable: true,
    value: (...args: unknown[]): boolean => {
      if (session.destroyed || session.closed) {
        const callback = args.find((a): a is (err: Error | null, duration: number, payload: Buffer) => void => typeof a === "function");
        if (callback) queueMicrotask(() => callback(new Error("HTTP/2 session already closed"), 0, Buffer.alloc(0)));
        return false;
      }
      return ping(...args);
    },
  });
}

/** Whether the installed connect-node still has the step the guard hooks. */
export function canGuard(manager: Http2SessionManager): boolean {
  return typeof (manager as unknown as Internals).gotoReady === "function";
}

export function createSessionManager(url: string, ping?: PingOptions, options?: SessionOptions): Http2SessionManager {
  const manager = new Http2SessionManager(url, ping, options);
  const internals = manager as unknown as Internals;
  const gotoReady = internals.gotoReady;
  if (typeof gotoReady !== "function") return manager;
  Object.defineProperty(manager, "gotoReady", {
    configurable: true,
    writable: true,
    value: async (): Promise<Ready> => {
      const ready = await gotoReady.call(manager);
      guardPing(ready.conn);
      return ready;
    },
  });
  return manager;
}
