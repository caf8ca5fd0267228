// Reading a whole v0.1 handoff directory for HandoffDirectory (directory.ts):
// every handoff file (a few reads in flight, bounded by maxFiles) and the
// handoff a task-id prefix names.
import { HandoffError } from "./errors";
import { isoToMs, type HandoffStatus } from "./record";
import { isHandoffFileName, type InvalidSnapshot, type Snapshot, type ValidSnapshot } from "./snapshot";

/** What the search reads through: the directory's names and one file by name. */
export interface SearchedDirectory {
  readonly dir: string;
  readonly maxFiles: number;
  names(): AsyncGenerator<string>;
  read(name: string): Promise<Snapshot | undefined>;
}

export interface ListResult {
  handoffs: ValidSnapshot[];
  invalid: InvalidSnapshot[];
  /** The directory holds more handoff files than `maxFiles`; the rest were not read. */
  truncated: boolean;
}

/** Every handoff (valid ones sorted by created_at), optionally only those with `status`. */
export async function listHandoffs(d: SearchedDirectory, opts: { status?: HandoffStatus } = {}): Promise<ListResult> {
  const handoffs: ValidSnapshot[] = [];
  const invalid: InvalidSnapshot[] = [];
  let count = 0;
  let truncated = false;
  const take = (s: Snapshot | undefined) => {
    if (!s) return;
    if (!s.valid) invalid.push(s);
    else if (opts.status === undefined || s.record.status === opts.status) handoffs.push(s);
  };
  // A few reads in flight at once (the file system serves them in parallel).
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for await (const name of d.names()) {
    if (count >= d.maxFiles) {
      truncated = true;
      break;
    }
    if (failure) break;
    count++;
    const p: Promise<void> = d
      .read(name)
      .then(take, (error: unknown) => void (failure ??= { error }))
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= 8) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  const when = (s: ValidSnapshot) => isoToMs(s.record.created_at) ?? 0;
  handoffs.sort((a, b) => when(a) - when(b) || a.name.localeCompare(b.name));
  invalid.sort((a, b) => a.name.localeCompare(b.name));
  return { handoffs, invalid, truncated };
}

/**
 * The handoff whose task_id is `prefix` or starts with it. An exact match
 * wins; several prefix matches are `ambiguous`; none is `not-found`. The
 * result may be an invalid file (callers refuse to act on it).
 */
export async function resolveHandoff(d: SearchedDirectory, prefix: string): Promise<Snapshot> {
  const p = prefix.trim();
  if (p === "" || p.includes("/") || p.includes("\\") || p.includes("\0")) {
    throw new HandoffError("bad-input", `${JSON.stringify(prefix)} is not a task id or prefix`);
  }
  if (isHandoffFileName(`${p}.json`)) {
    const exact = await d.read(`${p}.json`);
    if (exact) return exact;
  }
  const matches: string[] = [];
  let total = 0;
  let scanned = 0;
  for await (const name of d.names()) {
    if (++scanned > d.maxFiles * 10) break;
    if (name.startsWith(p)) {
      total++;
      if (matches.length < 10) matches.push(name.slice(0, -5));
    }
  }
  if (total === 0) throw new HandoffError("not-found", `no handoff matches "${p}" in ${d.dir}`);
  if (total > 1) {
    matches.sort();
    throw new HandoffError(
      "ambiguous",
      `"${p}" matches ${total} handoffs (${matches.join(", ")}${total > matches.length ? ", …" : ""}); give more of the id`,
      {
        matches,
      },
    );
  }
  const s = await d.read(`${matches[0] as string}.json`);
  if (!s) throw new HandoffError("not-found", `the handoff ${matches[0]} disappeared`);
  return s;
}
