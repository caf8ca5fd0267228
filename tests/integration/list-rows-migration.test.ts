// A schema-v2 store (tests/integration/__fixtures__/v2-store, see
// make-v2-store.ts) opened by the current runtime: the v3 migration adds the
// list rows empty, the runtime starts at once (serving while it backfills),
// folds every session's row in the background (resident ones from memory,
// closed ones from their stored envelopes), and the rows equal folding each
// history with the shared fold. The next start has nothing to backfill.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary, toJson } from "@bufbuild/protobuf";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { isTerminalState, leanEnvelope, nextActors, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import type { Identity } from "@/lib/runtime/auth";
import { loadConfig } from "@/lib/runtime/config";
import { Kernel } from "@/lib/runtime/kernel";
import type { StoredListRow } from "@/lib/runtime/store";
import { openSqliteStore, SQLITE_FILE_NAME, type SqliteStore } from "@/lib/runtime/store/sqlite";
import { tempDir } from "./harness";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, "__fixtures__", "v2-store");
const expected = JSON.parse(fs.readFileSync(path.join(here, "__fixtures__", "v1-store", "expected.json"), "utf8")) as {
  ids: Record<string, string>;
  sessions: { sessionId: string; startedAtUnixMs: string; participantActivity?: { lastMessageAtUnixMs: string }[] }[];
};
const fixtureNow =
  Math.max(
    ...expected.sessions.flatMap((s) => [
      Number(s.startedAtUnixMs),
      ...(s.participantActivity ?? []).map((a) => Number(a.lastMessageAtUnixMs)),
    ]),
  ) + 1_000;
const config = loadConfig({ MACP_ALLOW_INSECURE: "1", MACP_MESSAGE_LIMIT_PER_MINUTE: "0", MACP_SESSION_START_LIMIT_PER_MINUTE: "0" });
const target: Identity = {
  sender: "agent://target",
  canStartSessions: true,
  allowedModes: [],
  canManageRegistry: false,
  isObserver: false,
};

interface Logged {
  msg: string;
  obj: object;
}
function recordingLogger(lines: Logged[]) {
  const push = (obj: object, msg = "") => void lines.push({ obj, msg });
  return { info: push, warn: push, error: push };
}

const dirs: string[] = [];
const open: { store: SqliteStore; kernel: Kernel }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.kernel.close();
    await o.store.close();
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(dir: string, lines: Logged[] = []) {
  const store = openSqliteStore({ dir, logger: pino({ level: "silent" }) });
  const kernel = await Kernel.open({ store, config, logger: recordingLogger(lines), clock: () => fixtureNow });
  const o = { store, kernel };
  open.push(o);
  return o;
}

/** The row folded from the session's stored history with the shared fold. */
function folded(kernel: Kernel, sessionId: string, nowMs: number) {
  const meta = kernel.getSession(sessionId)?.metadata;
  if (!meta) throw new Error(`no session ${sessionId}`);
  const fold = new SessionFold(sessionId, meta.mode);
  for (const d of kernel.history(sessionId, 0, () => undefined)) fold.add(leanEnvelope(d.envelope));
  return {
    summary: toSummary(meta, fold.view, fold.count, nowMs),
    nextActors: nextActors(meta, fold.view),
    final: isTerminalState(meta.state),
  };
}

function allRows(kernel: Kernel): StoredListRow[] {
  const out: StoredListRow[] = [];
  for (let after = 0; ;) {
    const page = kernel.readListRows(after, 3);
    if (page.length === 0) return out;
    out.push(...page);
    after = page[page.length - 1]!.change;
  }
}

describe("schema v2 → v3: list rows for stored sessions", () => {
  it("starts at once, backfills every session's row in the background, and the next start has nothing to do", async () => {
    const dir = tempDir("baton-migrate-v3-");
    dirs.push(dir);
    fs.copyFileSync(path.join(fixture, SQLITE_FILE_NAME), path.join(dir, SQLITE_FILE_NAME));
    const lines: Logged[] = [];
    const first = await start(dir, lines);
    expect(first.store.openReport.schemaVersion).toBe(3);
    const storeId = first.kernel.storeId;
    expect(storeId).toMatch(/^[0-9a-f-]{36}$/);
    // v2 start-up cost: only the open sessions were read, not the closed ones' histories.
    expect(first.kernel.loadReport).toMatchObject({ indexed: 0 });
    // Serving while the backfill runs: an open session takes a message.
    const openId = expected.ids.open as string;
    const ack = await first.kernel.send(
      target,
      buildEnvelope({ mode: HANDOFF_MODE, messageType: "HandoffAccept", sessionId: openId, payload: { handoffId: "h1" } }),
    );
    expect(ack.ok, ack.error?.message).toBe(true);
    await first.kernel.listRowsBackfilled();
    expect(first.store.listRowsBackfilled()).toBe(true);
    expect(lines.some((l) => /list rows: backfill done \(\d+ sessions folded\)/.test(l.msg))).toBe(true);

    const rows = allRows(first.kernel);
    expect(rows.map((r) => r.sessionId).sort()).toEqual(expected.sessions.map((s) => s.sessionId).sort());
    for (const row of rows) {
      const summary = fromBinary(SessionSummarySchema, row.summary);
      const want = folded(first.kernel, row.sessionId, fixtureNow);
      expect(toJson(SessionSummarySchema, summary), row.sessionId).toEqual(toJson(SessionSummarySchema, want.summary));
      expect(row.nextActors, row.sessionId).toEqual(want.nextActors);
      expect(row.final, row.sessionId).toBe(want.final);
    }
    // The session written during the backfill kept the kernel's row (its accept is in it).
    const openRow = fromBinary(SessionSummarySchema, rows.find((r) => r.sessionId === openId)!.summary);
    expect(openRow.phase).toBe("Accepted");
    expect(rows.find((r) => r.sessionId === openId)?.nextActors).toEqual(["agent://owner"]);
    const resolved = fromBinary(SessionSummarySchema, rows.find((r) => r.sessionId === expected.ids.resolved)!.summary);
    expect(resolved).toMatchObject({ phase: "Committed", outcome: "positive", currentOwner: "agent://target" });
    expect(resolved.metadata?.state).toBe(SessionState.RESOLVED);
    const head = first.kernel.lastListChange();
    await first.kernel.close();
    await first.store.close();
    open.splice(0);

    const second = await start(dir);
    await second.kernel.listRowsBackfilled();
    expect(second.kernel.storeId).toBe(storeId);
    expect(second.kernel.lastListChange()).toBe(head);
    expect(allRows(second.kernel)).toEqual(rows);
  });

  it("resumes an interrupted backfill at the next start", async () => {
    const dir = tempDir("baton-migrate-v3-");
    dirs.push(dir);
    fs.copyFileSync(path.join(fixture, SQLITE_FILE_NAME), path.join(dir, SQLITE_FILE_NAME));
    const first = await start(dir);
    // Closed before the background backfill got anywhere.
    await first.kernel.close();
    await first.store.close();
    open.splice(0);
    const second = await start(dir);
    expect(second.store.listRowsBackfilled()).toBe(false);
    await second.kernel.listRowsBackfilled();
    expect(second.store.listRowsBackfilled()).toBe(true);
    expect(allRows(second.kernel)).toHaveLength(expected.sessions.length);
  });
});
