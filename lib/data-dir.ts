// The one data folder: everything the console and the embedded runtime write
// lives under BATON_DATA_DIR (default ./data, relative to the working
// directory): the runtime store (runtime/), the console catalog
// (console.sqlite) with the webhook outbox and the saved hand-off templates
// beside it (webhooks.sqlite, handoff-templates.sqlite), the users file, the sign-ins and the session secret. Each
// keeps its own override variable (MACP_DATA_DIR, BATON_CATALOG_PATH,
// BATON_USERS_FILE, BATON_LOGINS_FILE, BATON_SESSION_SECRET_FILE). No imports:
// the runtime, the accounts and the console server all use it.
import path from "node:path";

type Env = Record<string, string | undefined>;

/** The data folder, absolute. */
export function batonDataDir(env: Env = process.env, cwd = process.cwd()): string {
  const raw = env.BATON_DATA_DIR?.trim();
  return path.resolve(cwd, raw || "data");
}

/** A path inside the data folder. */
export function inDataDir(env: Env, ...parts: string[]): string {
  return path.join(batonDataDir(env), ...parts);
}
