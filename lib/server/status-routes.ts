// GET /status/runtime: whether the console reaches its MACP runtime
// (lib/gateway/runtime-health.ts), for the outage banner every page shows.
// Plain JSON, never cached. When reads need sign-in, so does this.
import type http from "node:http";
import type { RuntimeHealth } from "@/lib/gateway/runtime-health";
import { send } from "./auth-routes";
import type { HttpRoutes } from "./http";

export const RUNTIME_STATUS_PATH = "/status/runtime";

export function createStatusRoutes(options: {
  health: RuntimeHealth;
  /** When set, only signed-in people may read the status. */
  authenticate?: (headers: http.IncomingHttpHeaders) => Promise<unknown>;
}): HttpRoutes {
  return (req, res) => {
    const q = (req.url ?? "").indexOf("?");
    const pathname = q < 0 ? (req.url ?? "") : (req.url ?? "").slice(0, q);
    if (pathname !== RUNTIME_STATUS_PATH) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, { error: `Use GET for ${RUNTIME_STATUS_PATH}.` }, [], { allow: "GET" });
      return true;
    }
    const answer = (): void => send(res, 200, options.health.status());
    if (!options.authenticate) {
      answer();
      return true;
    }
    options.authenticate(req.headers).then(
      (who) => (who ? answer() : send(res, 401, { error: "Sign in to see the runtime's status." })),
      () => send(res, 500, { error: "Could not check the sign-in." }),
    );
    return true;
  };
}

/** Try each set of routes in order. */
export function firstRoutes(...routes: (HttpRoutes | undefined)[]): HttpRoutes {
  return (req, res) => routes.some((r) => r?.(req, res) === true);
}
