// The agents directory: display names for agent participant ids, from a small
// JSON file (BATON_AGENTS_FILE, default agents.json in the data folder),
// e.g.
//
//   {
//     "agent://oncall/pager-bot": "Pager bot",
//     "agent://billing/worker-2": "Billing worker 2"
//   }
//
// Read once at start. A missing default file means no names (agents show
// their shortened ids); a missing file named by BATON_AGENTS_FILE, or any bad
// entry, is an error that names the file, the line and the field, so the
// console does not start with half a directory. People are not listed here:
// their names come from the accounts.
import fs from "node:fs";
import path from "node:path";
import { isValidParticipantId } from "@/lib/authz/participants";
import { batonDataDir } from "@/lib/data-dir";

type Env = Record<string, string | undefined>;

export const MAX_AGENT_NAME = 80;
export const MAX_AGENTS = 10_000;
/** Larger files are refused before parsing. */
export const MAX_AGENTS_FILE_BYTES = 1_048_576;

export class AgentsFileError extends Error {
  override name = "AgentsFileError";
}

/** 1-based line of a character offset. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The line of a key in the file (its first occurrence as a JSON string), for messages. */
function lineOfKey(text: string, key: string): number | undefined {
  const at = text.indexOf(JSON.stringify(key));
  return at < 0 ? undefined : lineOf(text, at);
}

/** Parse and check the agents file's text; `file` names it in errors. */
export function parseAgentsFile(text: string, file: string): Map<string, string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    // V8: "... at position 42" or "(line 3 column 5)".
    const lc = /line (\d+) column (\d+)/.exec(msg);
    const pos = /position (\d+)/.exec(msg);
    const where = lc ? `line ${lc[1]}, column ${lc[2]}` : pos ? `line ${lineOf(text, Number(pos[1]))}` : "";
    throw new AgentsFileError(`${file}${where ? ` ${where}` : ""}: not valid JSON (${msg})`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new AgentsFileError(
      `${file} line 1: must be a JSON object mapping agent ids to display names, e.g. {"agent://oncall/pager-bot": "Pager bot"}`,
    );
  }
  const out = new Map<string, string>();
  const entries = Object.entries(doc as Record<string, unknown>);
  if (entries.length > MAX_AGENTS) throw new AgentsFileError(`${file}: ${entries.length} agents; at most ${MAX_AGENTS}`);
  for (const [id, value] of entries) {
    const line = lineOfKey(text, id);
    const at = `${file}${line !== undefined ? ` line ${line}` : ""}, field ${JSON.stringify(id)}`;
    if (!isValidParticipantId(id))
      throw new AgentsFileError(`${at}: not a participant id (non-empty, at most 512 characters, no spaces or control characters)`);
    if (id.startsWith("human:"))
      throw new AgentsFileError(`${at}: a person's id; people's names come from the accounts, not the agents file`);
    if (typeof value !== "string")
      throw new AgentsFileError(
        `${at}: the display name must be a string, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
      );
    const name = value.trim();
    if (name === "") throw new AgentsFileError(`${at}: the display name is empty`);
    if (/[\u0000-\u001f\u007f]/.test(name)) throw new AgentsFileError(`${at}: the display name contains control characters`);
    if ([...name].length > MAX_AGENT_NAME) throw new AgentsFileError(`${at}: the display name is longer than ${MAX_AGENT_NAME} characters`);
    out.set(id, name);
  }
  return out;
}

/** The agents file's path: BATON_AGENTS_FILE (relative to `dir`), else agents.json in the data folder. */
export function agentsFilePath(env: Env, dir: string): { file: string; explicit: boolean } {
  const raw = env.BATON_AGENTS_FILE?.trim();
  if (raw) return { file: path.resolve(dir, raw), explicit: true };
  return { file: path.join(batonDataDir(env, dir), "agents.json"), explicit: false };
}

/** Read the agents directory at start (an empty map when the default file does not exist). */
export function loadAgentNames(env: Env, dir: string): { file: string; names: Map<string, string> } {
  const { file, explicit } = agentsFilePath(env, dir);
  let text: string;
  try {
    const st = fs.statSync(file);
    if (st.size > MAX_AGENTS_FILE_BYTES) throw new AgentsFileError(`${file}: ${st.size} bytes; at most ${MAX_AGENTS_FILE_BYTES}`);
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if (e instanceof AgentsFileError) throw e;
    if ((e as NodeJS.ErrnoException).code === "ENOENT" && !explicit) return { file, names: new Map() };
    throw new AgentsFileError(`cannot read the agents file ${file} (BATON_AGENTS_FILE): ${(e as Error).message}`);
  }
  return { file, names: parseAgentsFile(text, file) };
}
