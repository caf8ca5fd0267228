// How the bridge acts as the agents named in the files. On a dev-mode
// runtime (the embedded one by default) any identity can be named. On a
// runtime with token auth the bridge needs each agent's token: a tokens file
// in the runtime's own format (MACP_AUTH_TOKENS_FILE: a JSON list, or
// {"tokens": [...]}, of {token, sender, …}) gives them; agents without a
// token are reported and not mirrored.

import fs from "node:fs";
import { Auth, type AuthConfig } from "@/lib/agent";
import { HandoffError } from "../errors";

export type Credentials = (identity: string) => AuthConfig | undefined;

/** Dev mode: act as anyone by naming them. */
export const devCredentials: Credentials = (identity) => Auth.devAgent(identity);

/** Parse a tokens document; throws `bad-input` naming what is wrong. */
export function parseTokens(text: string, source: string): Map<string, string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new HandoffError("bad-input", `${source} is not valid JSON (${(e as Error).message})`);
  }
  const list = Array.isArray(doc)
    ? doc
    : typeof doc === "object" && doc !== null && Array.isArray((doc as { tokens?: unknown }).tokens)
      ? (doc as { tokens: unknown[] }).tokens
      : undefined;
  if (!list) throw new HandoffError("bad-input", `${source} must be a JSON list of {token, sender} or {"tokens": [...]}`);
  const out = new Map<string, string>();
  list.forEach((item, i) => {
    const t = item as { token?: unknown; sender?: unknown };
    if (typeof t?.token !== "string" || t.token === "" || typeof t.sender !== "string" || t.sender === "") {
      throw new HandoffError("bad-input", `${source}: entry ${i + 1} needs a non-empty "token" and "sender"`);
    }
    out.set(t.sender, t.token);
  });
  return out;
}

/** Token mode: the token of each sender from a tokens file. */
export function tokenCredentials(file: string): Credentials {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new HandoffError("bad-input", `cannot read the tokens file ${file}: ${(e as Error).message}`);
  }
  const tokens = parseTokens(text, file);
  return (identity) => {
    const token = tokens.get(identity);
    return token === undefined ? undefined : Auth.bearer(token, { expectedSender: identity });
  };
}
