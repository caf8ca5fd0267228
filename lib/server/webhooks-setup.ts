// Outbound notifications for `startConsole`: the webhooks file is read and
// checked before anything starts (a bad file stops the console with the
// reason); once the console listens, the notifier follows its catalog.
import fs from "node:fs";
import path from "node:path";
import type { Accounts } from "@/lib/accounts/accounts";
import type { Gateway } from "@/lib/gateway/gateway";
import type { GatewayLogger } from "@/lib/gateway/logger";
import type { PolicyCache } from "@/lib/gateway/policies";
import { designatedRoles, commitmentAuthority } from "@/lib/authz/policy-summary";
import { loadWebhooks, WebhookConfigError, type WebhookConfig } from "@/lib/notify/config";
import { Notifier } from "@/lib/notify/notifier";
import { NotifyStore } from "@/lib/notify/outbox";
import { ConsoleConfigError } from "./config";

type Env = Record<string, string | undefined>;

export interface WebhooksPlan {
  file: string;
  hooks: WebhookConfig[];
  /** BATON_PUBLIC_URL, if set (else the console's origin). */
  publicUrl: string | null;
}

export function planWebhooks(env: Env, dir: string): WebhooksPlan {
  const raw = env.BATON_PUBLIC_URL?.trim();
  let publicUrl: string | null = null;
  if (raw) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConsoleConfigError(`BATON_PUBLIC_URL must be the console's address as people reach it (http:// or https://), got "${raw}"`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:")
      throw new ConsoleConfigError(`BATON_PUBLIC_URL must be http:// or https://, got "${raw}"`);
    publicUrl = raw.replace(/\/+$/, "");
  }
  try {
    return { ...loadWebhooks(env, dir), publicUrl };
  } catch (e) {
    if (e instanceof WebhookConfigError) throw new ConsoleConfigError(e.message);
    throw e;
  }
}

export interface WebhooksDeps {
  gateway: Gateway;
  /** The catalog's file (":memory:" keeps the outbox in memory too) and what it describes. */
  catalogPath: string;
  catalogSource: string;
  /** Project root (a relative BATON_WEBHOOKS_FILE is relative to it). */
  dir: string;
  /** The console's URL once it listens (links fall back to it). */
  consoleUrl: string;
  env: Env;
  accounts: Accounts | null;
  policies: PolicyCache | null;
  logger: GatewayLogger;
}

/** Start the notifier, or null when the file names no webhooks. */
export function startWebhooks(plan: WebhooksPlan, deps: WebhooksDeps): Notifier | null {
  if (plan.hooks.length === 0) return null;
  const storePath = deps.catalogPath === ":memory:" ? ":memory:" : path.join(path.dirname(deps.catalogPath), "webhooks.sqlite");
  let store: NotifyStore;
  try {
    store = new NotifyStore(storePath);
  } catch (e) {
    throw new ConsoleConfigError(`cannot open the webhook outbox ${storePath}: ${(e as Error).message}`);
  }
  const publicUrl = plan.publicUrl ?? deps.env.BATON_PUBLIC_ORIGIN?.split(",")[0]?.trim() ?? deps.consoleUrl;
  const accounts = deps.accounts;
  const policies = deps.policies;
  const notifier = new Notifier({
    hooks: plan.hooks,
    store,
    catalog: deps.gateway.catalog,
    catalogId: `${deps.catalogPath}\n${deps.catalogSource}`,
    onCatalogWrite: (listener) => deps.gateway.feeder.onWrite(() => listener()),
    ready: () => !deps.gateway.feeder.status().backfilling,
    approvers: async (policyId) => {
      const p = policies ? await policies.summary(policyId) : undefined;
      return p && commitmentAuthority(p) === "designated_role" ? designatedRoles(p) : [];
    },
    names: async () => {
      const out = new Map<string, string>();
      if (!accounts) return out;
      for (const u of await accounts.directory.users()) if (u.displayName) out.set(u.participantId, u.displayName);
      return out;
    },
    publicUrl: publicUrl || deps.consoleUrl,
    logger: deps.logger,
  });
  notifier.start();
  // Follow changes of the file: a valid new version replaces the hooks; an
  // invalid one is logged and the hooks in use stay.
  const reload = (now: fs.Stats, before: fs.Stats): void => {
    if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
    try {
      const { hooks } = loadWebhooks(deps.env, deps.dir);
      notifier.setHooks(hooks);
      deps.logger.info(
        { file: plan.file, hooks: hooks.map((h) => `${h.id} (${h.format})`) },
        "webhooks: the webhooks file changed; using its hooks now",
      );
    } catch (e) {
      deps.logger.error(
        { file: plan.file, err: (e as Error).message },
        "webhooks: the changed webhooks file is invalid; keeping the hooks in use",
      );
    }
  };
  fs.watchFile(plan.file, { interval: 1_000, persistent: false }, reload);
  notifier.onClose(() => fs.unwatchFile(plan.file, reload));
  deps.logger.info(
    { file: plan.file, hooks: plan.hooks.map((h) => `${h.id} (${h.format})`), outbox: storePath, links: publicUrl || deps.consoleUrl },
    "webhooks: sending notifications",
  );
  return notifier;
}
