// `npm run users -- <command>`: manage the console's users file.
// The entry point is scripts/users.ts; this module holds the logic so tests
// can drive it without a child process.
import { ROLES, isRole, type Role } from "@/lib/authz/roles";
import { isValidParticipantId } from "@/lib/authz/decide";
import type { Env } from "./env";
import { DEFAULT_SCRYPT, generatePassword, hashPassword, passwordProblem, type ScryptParams } from "./password";
import {
  UsersFileError,
  defaultParticipantId,
  normalizeUsername,
  readUsersFile,
  updateUsersFile,
  usernameProblem,
  usersFilePath,
  type UserRecord,
} from "./users-file";

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Read a password: all of stdin when piped, or a hidden prompt on a terminal. */
  readPassword(prompt: string): Promise<string>;
  env: Env;
}

export interface CliOptions {
  scrypt?: ScryptParams;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export const USAGE = `Manage Baton console users (file: BATON_USERS_FILE, default $BATON_DATA_DIR/users.json, i.e. ./data/users.json).

Usage: npm run users -- <command> [options]

Commands:
  add <username> --role <role> [--name "Display Name"] [--participant <id>]
                 [--email <address>] [--oidc-subject <sub>] [--password-stdin]
      Create a user. Without --password-stdin a random password is generated,
      printed once, and must be changed at first sign-in.
  passwd <username> [--password-stdin]
      Set a new password (generated unless --password-stdin). Ends the user's sessions.
  set-role <username> <role>
  disable <username>      Refuse sign-in and end the user's sessions.
  enable <username>
  list                    Show users (never hashes or tokens).

Options:
  --file <path>           Users file to edit instead of BATON_USERS_FILE.
  --role <role>           One of: ${ROLES.join(", ")}.
  --participant <id>      MACP participant id (default human:<username>).
  --password-stdin        Read the password from standard input (piped) or a hidden prompt.

Exit codes: 0 done, 1 failed (see the message), 2 wrong usage.`;

class UsageError extends Error {}
class CliFailure extends Error {}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

const VALUE_FLAGS = new Set(["--role", "--name", "--participant", "--email", "--oidc-subject", "--file"]);
const BOOL_FLAGS = new Set(["--password-stdin", "--help", "-h"]);

function parseArgs(argv: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg.startsWith("-")) {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      if (VALUE_FLAGS.has(name)) {
        const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
        if (value === undefined || (eq < 0 && value.startsWith("--"))) throw new UsageError(`${name} needs a value`);
        if (flags.has(name)) throw new UsageError(`${name} given twice`);
        flags.set(name, value);
      } else if (BOOL_FLAGS.has(name) && eq < 0) {
        flags.set(name, true);
      } else {
        throw new UsageError(`unknown option ${arg}`);
      }
    } else {
      positional.push(arg);
    }
  }
  return { positional, flags };
}

function flag(p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name);
  return typeof v === "string" ? v : undefined;
}

function onlyFlags(p: Parsed, allowed: readonly string[]): void {
  for (const name of p.flags.keys()) {
    if (name !== "--file" && !allowed.includes(name)) throw new UsageError(`${name} does not apply to this command`);
  }
}

function usernameArg(p: Parsed, index = 1): string {
  const raw = p.positional[index];
  if (raw === undefined) throw new UsageError("missing <username>");
  const username = normalizeUsername(raw);
  const problem = usernameProblem(username);
  if (problem) throw new UsageError(`username "${raw}" ${problem}`);
  return username;
}

function roleArg(value: string | undefined): Role {
  if (value === undefined) throw new UsageError(`missing role (one of ${ROLES.join(", ")})`);
  if (!isRole(value)) throw new UsageError(`unknown role "${value}" (one of ${ROLES.join(", ")})`);
  return value;
}

function findUser(users: UserRecord[], username: string): UserRecord {
  const u = users.find((x) => x.username === username);
  if (!u) throw new CliFailure(`no user named "${username}" (see: npm run users -- list)`);
  return u;
}

async function choosePassword(p: Parsed, io: CliIO): Promise<{ password: string; generated: boolean }> {
  if (p.flags.get("--password-stdin") !== true) return { password: generatePassword(), generated: true };
  const password = await io.readPassword("New password: ");
  const problem = passwordProblem(password);
  if (problem) throw new CliFailure(problem);
  return { password, generated: false };
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

export async function runUsersCli(argv: readonly string[], io: CliIO, options: CliOptions = {}): Promise<number> {
  const scrypt = options.scrypt ?? DEFAULT_SCRYPT;
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (e) {
    io.err(`error: ${(e as Error).message}\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  const command = parsed.positional[0];
  if (command === "help" || parsed.flags.has("--help") || parsed.flags.has("-h")) {
    io.out(`${USAGE}\n`);
    return EXIT_OK;
  }
  if (command === undefined) {
    io.err(`${USAGE}\n`);
    return EXIT_USAGE;
  }
  const file = flag(parsed, "--file") ?? usersFilePath(io.env);
  try {
    switch (command) {
      case "add":
        return await add(parsed, file, io, scrypt);
      case "passwd":
        return await passwd(parsed, file, io, scrypt);
      case "set-role":
        return await setRole(parsed, file, io);
      case "disable":
      case "enable":
        return await setDisabled(parsed, file, io, command === "disable");
      case "list":
        return await list(parsed, file, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`error: ${e.message}\n\nRun "npm run users -- help" for usage.\n`);
      return EXIT_USAGE;
    }
    if (e instanceof CliFailure || e instanceof UsersFileError) {
      io.err(`error: ${e.message}\n`);
      return EXIT_FAILURE;
    }
    io.err(`error: ${(e as Error).message}\n`);
    return EXIT_FAILURE;
  }
}

async function add(p: Parsed, file: string, io: CliIO, scrypt: ScryptParams): Promise<number> {
  onlyFlags(p, ["--role", "--name", "--participant", "--email", "--oidc-subject", "--password-stdin"]);
  if (p.positional.length > 2) throw new UsageError(`unexpected argument "${p.positional[2]}"`);
  const username = usernameArg(p);
  const role = roleArg(flag(p, "--role"));
  const displayName = (flag(p, "--name") ?? username).trim();
  const participantId = flag(p, "--participant") ?? defaultParticipantId(username);
  if (!isValidParticipantId(participantId)) {
    throw new UsageError(`participant id "${participantId}" must be 1–512 characters without spaces`);
  }
  const { password, generated } = await choosePassword(p, io);
  const passwordHash = await hashPassword(password, scrypt);
  await updateUsersFile(file, (data) => {
    if (data.users.some((u) => u.username === username)) throw new CliFailure(`user "${username}" already exists`);
    const holder = data.users.find((u) => u.participantId === participantId);
    if (holder) throw new CliFailure(`participant id "${participantId}" is already used by "${holder.username}"`);
    const user: UserRecord = { username, displayName, role, participantId, passwordHash };
    if (generated) user.mustChangePassword = true;
    const email = flag(p, "--email");
    if (email !== undefined) user.email = email;
    const subject = flag(p, "--oidc-subject");
    if (subject !== undefined) user.oidcSubject = subject;
    data.users.push(user);
  });
  io.out(`Added ${username} (${role}, acting as ${participantId}) to ${file}.\n`);
  if (generated) {
    io.out(`One-time password: ${password}\nIt is shown only now; ${username} must choose a new one at first sign-in.\n`);
  }
  return EXIT_OK;
}

async function passwd(p: Parsed, file: string, io: CliIO, scrypt: ScryptParams): Promise<number> {
  onlyFlags(p, ["--password-stdin"]);
  if (p.positional.length > 2) throw new UsageError(`unexpected argument "${p.positional[2]}"`);
  const username = usernameArg(p);
  const existing = await readUsersFile(file);
  findUser(existing?.users ?? [], username);
  const { password, generated } = await choosePassword(p, io);
  const passwordHash = await hashPassword(password, scrypt);
  await updateUsersFile(file, (data) => {
    const u = findUser(data.users, username);
    u.passwordHash = passwordHash;
    if (generated) u.mustChangePassword = true;
    else delete u.mustChangePassword;
  });
  io.out(`Password of ${username} changed; their console sessions end at their next request.\n`);
  if (generated) io.out(`One-time password: ${password}\nIt is shown only now; ${username} must choose a new one at next sign-in.\n`);
  return EXIT_OK;
}

async function setRole(p: Parsed, file: string, io: CliIO): Promise<number> {
  onlyFlags(p, ["--role"]);
  const username = usernameArg(p);
  const role = roleArg(p.positional[2] ?? flag(p, "--role"));
  if (p.positional.length > 3) throw new UsageError(`unexpected argument "${p.positional[3]}"`);
  let before: Role = role;
  await updateUsersFile(file, (data) => {
    const u = findUser(data.users, username);
    before = u.role;
    if (role !== "admin" && u.role === "admin" && !otherEnabledAdmin(data.users, username)) {
      throw new CliFailure(`${username} is the last enabled admin; make someone else admin first`);
    }
    u.role = role;
  });
  io.out(before === role ? `${username} already has the role ${role}.\n` : `${username}: ${before} → ${role}.\n`);
  return EXIT_OK;
}

function otherEnabledAdmin(users: readonly UserRecord[], username: string): boolean {
  return users.some((u) => u.username !== username && u.role === "admin" && u.disabled !== true);
}

async function setDisabled(p: Parsed, file: string, io: CliIO, disabled: boolean): Promise<number> {
  onlyFlags(p, []);
  if (p.positional.length > 2) throw new UsageError(`unexpected argument "${p.positional[2]}"`);
  const username = usernameArg(p);
  await updateUsersFile(file, (data) => {
    const u = findUser(data.users, username);
    if (disabled && u.role === "admin" && u.disabled !== true && !otherEnabledAdmin(data.users, username)) {
      throw new CliFailure(`${username} is the last enabled admin; disabling it would lock everyone out of user management`);
    }
    if (disabled) u.disabled = true;
    else delete u.disabled;
  });
  io.out(disabled ? `${username} is disabled; their console sessions end at their next request.\n` : `${username} is enabled.\n`);
  return EXIT_OK;
}

async function list(p: Parsed, file: string, io: CliIO): Promise<number> {
  onlyFlags(p, []);
  if (p.positional.length > 1) throw new UsageError(`unexpected argument "${p.positional[1]}"`);
  const data = await readUsersFile(file);
  if (!data || data.users.length === 0) {
    io.out(`No users in ${file}.\n`);
    return EXIT_OK;
  }
  const rows = data.users.map((u) => {
    const signIn = [u.passwordHash !== undefined ? "password" : "", u.oidcSubject !== undefined || u.email !== undefined ? "oidc" : ""]
      .filter((s) => s !== "")
      .join("+");
    const status = [u.disabled === true ? "disabled" : "active", u.mustChangePassword === true ? "must change password" : ""]
      .filter((s) => s !== "")
      .join(", ");
    return [u.username, u.displayName, u.role, u.participantId, signIn, u.runtimeToken !== undefined ? "yes" : "no", status];
  });
  const header = ["USERNAME", "NAME", "ROLE", "PARTICIPANT", "SIGN-IN", "RUNTIME TOKEN", "STATUS"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i] as number))).join("  ");
  io.out(`${[line(header), ...rows.map(line)].join("\n")}\n`);
  return EXIT_OK;
}
