// The webhooks file: outbound notifications (BATON_WEBHOOKS_FILE, default
// $BATON_DATA_DIR/webhooks.json; absent = no webhooks). Checked when the
// console starts: a bad file stops it with the reason, naming the field.
//
//   { "webhooks": [
//       { "id": "oncall", "url": "https://hooks.example.com/baton", "format": "generic",
//         "secretEnv": "ONCALL_HOOK_SECRET", "events": ["offer.waiting"], "participants": ["human:alice"] },
//       { "id": "slack", "url": "https://hooks.slack.com/services/...", "format": "slack" } ] }
import fs from "node:fs";
import path from "node:path";
import { batonDataDir } from "@/lib/data-dir";
import { EVENT_KINDS, isEventKind, type EventKind } from "./events";

type Env = Record<string, string | undefined>;

export type WebhookFormat = "generic" | "slack";

export interface WebhookConfig {
  id: string;
  url: string;
  format: WebhookFormat;
  /** HMAC-SHA256 key (generic hooks; Slack URLs carry their own secret). */
  secret: string | null;
  /** Only these events (null = all). */
  events: ReadonlySet<EventKind> | null;
  /** Only sessions involving one of these participant ids (null = all). */
  participants: ReadonlySet<string> | null;
}

export class WebhookConfigError extends Error {
  override name = "WebhookConfigError";
}

const ID = /^[A-Za-z0-9._-]{1,64}$/;
const KEYS = new Set(["id", "url", "format", "secret", "secretEnv", "events", "participants"]);
const MAX_HOOKS = 100;

export function webhooksFilePath(env: Env, cwd = process.cwd()): string {
  const raw = env.BATON_WEBHOOKS_FILE?.trim();
  return raw ? path.resolve(cwd, raw) : path.join(batonDataDir(env, cwd), "webhooks.json");
}

/** The hooks in the file, or [] when there is no file. */
export function loadWebhooks(env: Env, cwd = process.cwd()): { file: string; hooks: WebhookConfig[] } {
  const file = webhooksFilePath(env, cwd);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { file, hooks: [] };
    throw new WebhookConfigError(`cannot read the webhooks file ${file}: ${(e as Error).message}`);
  }
  return { file, hooks: parseWebhooks(text, file, env) };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function parseWebhooks(text: string, file: string, env: Env): WebhookConfig[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new WebhookConfigError(`the webhooks file ${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObj(doc) || !Array.isArray(doc.webhooks)) {
    throw new WebhookConfigError(`the webhooks file ${file} must be an object with a "webhooks" array`);
  }
  if (doc.webhooks.length > MAX_HOOKS) throw new WebhookConfigError(`${file}: at most ${MAX_HOOKS} webhooks`);
  const seen = new Set<string>();
  return doc.webhooks.map((raw: unknown, i: number) => {
    const at = `${file}: webhooks[${i}]`;
    if (!isObj(raw)) throw new WebhookConfigError(`${at} must be an object`);
    for (const k of Object.keys(raw))
      if (!KEYS.has(k)) throw new WebhookConfigError(`${at}: unknown field "${k}" (known: ${[...KEYS].join(", ")})`);
    const { id, url, format } = raw;
    if (typeof id !== "string" || !ID.test(id)) throw new WebhookConfigError(`${at}.id must be 1-64 letters, digits, ".", "_" or "-"`);
    if (seen.has(id)) throw new WebhookConfigError(`${at}.id "${id}" is used twice`);
    seen.add(id);
    const where = `${file}: webhook "${id}"`;
    if (typeof url !== "string") throw new WebhookConfigError(`${where}: url must be a string`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new WebhookConfigError(`${where}: url "${url}" is not a URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new WebhookConfigError(`${where}: url must be http:// or https://`);
    if (parsed.username || parsed.password) throw new WebhookConfigError(`${where}: url must not carry a user name or password`);
    const fmt = format ?? "generic";
    if (fmt !== "generic" && fmt !== "slack") throw new WebhookConfigError(`${where}: format must be "generic" or "slack"`);
    let secret: string | null = null;
    if (raw.secret !== undefined && raw.secretEnv !== undefined)
      throw new WebhookConfigError(`${where}: give secret or secretEnv, not both`);
    if (raw.secret !== undefined) {
      if (typeof raw.secret !== "string" || raw.secret.length < 16)
        throw new WebhookConfigError(`${where}: secret must be a string of at least 16 characters`);
      secret = raw.secret;
    } else if (raw.secretEnv !== undefined) {
      if (typeof raw.secretEnv !== "string" || raw.secretEnv === "")
        throw new WebhookConfigError(`${where}: secretEnv must name an environment variable`);
      const v = env[raw.secretEnv];
      if (v === undefined || v.length < 16) {
        throw new WebhookConfigError(
          `${where}: secretEnv names ${raw.secretEnv}, which is ${v === undefined ? "not set" : "shorter than 16 characters"}`,
        );
      }
      secret = v;
    }
    if (fmt === "generic" && secret === null)
      throw new WebhookConfigError(`${where}: a generic webhook needs a secret or secretEnv (its HMAC-SHA256 key)`);
    let events: Set<EventKind> | null = null;
    if (raw.events !== undefined) {
      if (!Array.isArray(raw.events) || raw.events.length === 0) throw new WebhookConfigError(`${where}: events must be a non-empty array`);
      events = new Set();
      for (const e of raw.events) {
        if (typeof e !== "string" || !isEventKind(e))
          throw new WebhookConfigError(`${where}: events: unknown event ${JSON.stringify(e)} (known: ${EVENT_KINDS.join(", ")})`);
        events.add(e);
      }
    }
    let participants: Set<string> | null = null;
    if (raw.participants !== undefined) {
      if (
        !Array.isArray(raw.participants) ||
        raw.participants.length === 0 ||
        !raw.participants.every((p) => typeof p === "string" && p !== "")
      ) {
        throw new WebhookConfigError(`${where}: participants must be a non-empty array of participant ids`);
      }
      participants = new Set(raw.participants as string[]);
    }
    return { id, url, format: fmt, secret, events, participants };
  });
}

/** Does this hook want this event? */
export function hookWants(hook: WebhookConfig, kind: EventKind, involved: readonly string[]): boolean {
  if (hook.events && !hook.events.has(kind)) return false;
  if (hook.participants && !involved.some((p) => hook.participants?.has(p))) return false;
  return true;
}
