// The console's one HTTP server and what it serves: the Connect services
// (console reads, people's actions, v0.1 file handoffs) behind the access
// interceptor, the status and /auth/* routes, the production build's static
// files, and every other request to Next.js (signed-out page visits go to
// /login first when reads need sign-in).
import type http from "node:http";
import path from "node:path";
import type { ConnectRouter } from "@connectrpc/connect";
import type pino from "pino";
import type { Accounts } from "@/lib/accounts/accounts";
import { actionRoutes } from "@/lib/gateway/action-routes";
import type { FileHandoffs } from "@/lib/gateway/file-handoffs";
import { fileRoutes } from "@/lib/gateway/file-routes";
import type { Gateway } from "@/lib/gateway/gateway";
import { accessInterceptor } from "@/lib/gateway/request-auth";
import { consoleRoutes } from "@/lib/gateway/routes";
import type { RuntimeHealth } from "@/lib/gateway/runtime-health";
import type { SignInStreams } from "@/lib/gateway/sign-in-streams";
import type { Notifier } from "@/lib/notify/notifier";
import type { OidcLogin } from "@/lib/oidc";
import { createAuthRoutes } from "./auth-routes";
import type { ConsoleActions } from "./console-actions";
import type { ConsoleConfig } from "./config";
import { createConsoleServer, type Fallback } from "./http";
import { signInRedirect } from "./page-guard";
import { createStaticAssets } from "./static-assets";
import { createStatusRoutes, firstRoutes } from "./status-routes";

type Env = Record<string, string | undefined>;

export interface ConsoleServerParts {
  config: ConsoleConfig;
  env: Env;
  /** Whether Next.js serves the UI. */
  ui: boolean;
  gateway: Gateway;
  auth: { accounts: Accounts } | null;
  /** People's actions (with accounts). */
  acting: ConsoleActions | null;
  files: { files: FileHandoffs | null; bridges: number };
  notifier: () => Notifier | null;
  oidc: () => OidcLogin | null;
  health: RuntimeHealth;
  signInStreams: SignInStreams | null;
  shutdownSignal: AbortSignal;
  /** The largest payload a person may send. */
  maxPayloadBytes: number;
  /** Next.js's request handler (or "starting" until it is ready). */
  serve: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;
  logger: pino.Logger;
}

export function buildConsoleServer(parts: ConsoleServerParts): http.Server {
  const { config, env, ui, gateway, auth, acting, files, logger } = parts;
  const consoleLogger = logger.child({ component: "console" });
  const routes = (router: ConnectRouter) => {
    consoleRoutes(gateway)(router);
    if (auth && acting) {
      actionRoutes({
        gateway,
        actions: acting.actions,
        accounts: auth.accounts,
        env,
        heartbeatMs: config.heartbeatMs,
        demo: acting.demo,
        webhooks: parts.notifier,
        templates: acting.templates,
        escalations: acting.escalations,
      })(router);
    }
    fileRoutes({
      files: files.files,
      auth: auth ? { accounts: auth.accounts, env } : null,
      requireSignIn: config.requireSignIn,
      bridge: files.bridges > 0,
      track: (stream, signal) => gateway.trackBrowserStream(stream, signal),
      isClosed: () => gateway.isClosed,
      logger: logger.child({ component: "files" }),
    })(router);
  };
  // Signed-out page visits go to /login first when reads need sign-in.
  const guardPages = config.requireSignIn && auth ? auth.accounts : null;
  const fallback: Fallback | undefined = ui
    ? async (req, res) => {
        const location = guardPages ? signInRedirect(req.method ?? "GET", req.url ?? "/", req.headers) : null;
        if (location !== null && guardPages && !(await guardPages.authenticate(req.headers))) {
          res.writeHead(302, { location, "cache-control": "no-store" });
          res.end();
          return;
        }
        return parts.serve(req, res);
      }
    : undefined;
  const statusRoutes = createStatusRoutes({
    health: parts.health,
    ...(config.requireSignIn && auth ? { authenticate: (headers: http.IncomingHttpHeaders) => auth.accounts.authenticate(headers) } : {}),
  });
  let refusedLogged = 0;
  return createConsoleServer({
    routes,
    fallback,
    shutdownSignal: parts.shutdownSignal,
    limits: config.connections,
    security: { env, dev: config.dev },
    // The production build's browser files, pre-compressed by `npm run build`
    // (development mode serves them from memory through Next.js).
    ...(ui && !config.dev ? { staticAssets: createStaticAssets({ dir: path.join(config.dir, ".next", "static") }) } : {}),
    // Who may call each method, checked once per call (lib/gateway/request-auth.ts,
    // rules in access-rules.ts); then streams follow the sign-in it checked.
    interceptors: [
      accessInterceptor({
        auth: auth ? { accounts: auth.accounts, env } : null,
        requireSignInToRead: config.requireSignIn,
        isClosed: () => gateway.isClosed,
      }),
      ...(parts.signInStreams ? [parts.signInStreams.interceptor()] : []),
    ],
    onConnectionRefused: (address, open) => {
      // At most one line a second however hard someone pushes.
      const now = Date.now();
      if (now - refusedLogged < 1_000) return;
      refusedLogged = now;
      consoleLogger.warn(
        { address, open, limit: config.connections.maxPerAddress },
        "connection refused: too many open connections from one address (BATON_MAX_CONNECTIONS_PER_ADDRESS)",
      );
    },
    // Room for an upload of the runtime's full payload size, even base64 in JSON.
    readMaxBytes: Math.ceil((parts.maxPayloadBytes * 4) / 3) + 256 * 1024,
    httpRoutes: firstRoutes(
      statusRoutes,
      auth
        ? createAuthRoutes({
            accounts: auth.accounts,
            oidc: parts.oidc,
            signInRequired: config.requireSignIn,
            env,
            logger: logger.child({ component: "auth" }),
          })
        : undefined,
    ),
  });
}
