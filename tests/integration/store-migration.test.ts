// A store written by the schema-v1 runtime (tests/integration/__fixtures__/
// v1-store, see make-v1-store.ts) is migrated to schema v2 in place when the
// current runtime opens it: the first start replays every session once and
// writes their summaries and message ids to the index; every answer is the
// same as the v1 runtime gave; the next start reads only the open ones.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { toJson } from "@bufbuild/protobuf";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import type { Identity } from "@/lib/runtime/auth";
import { loadConfig } from "@/lib/runtime/config";
import { Kernel } from "@/lib/runtime/kernel";
import { openSqliteStore, SQLITE_FILE_NAME, type SqliteStore } from "@/lib/runtime/store/sqlite";
import { tempDir } from "./harness";

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), "__fixtures__", "v1-store");
const expected = JSON.parse(fs.readFileSync(path.join(fixture, "expected.json"), "utf8")) as {
  ids: Record<string, string>;
  sessions: Array<
    Record<string, unknown> & {
      sessionId: string;
      state: string;
      startedAtUnixMs: string;
      participantActivity?: { lastMessageAtUnixMs: string }[];
    }
  >;
  histories: Record<string, string[]>;
};
// The v1 runtime's answers were taken right after it wrote the store; the
// kernel runs on a clock from that moment, so no open session has expired since.
const fixtureNow =
  Math.max(
    ...expected.sessions.flatMap((s) => [
      Number(s.startedAtUnixMs),
      ...(s.participantActivity ?? []).map((a) => Number(a.lastMessageAtUnixMs)),
    ]),
  ) + 1_000;
const silent = pino({ level: "silent" });
const config = loadConfig({ MACP_ALLOW_INSECURE: "1", MACP_MESSAGE_LIMIT_PER_MINUTE: "0", MACP_SESSION_START_LIMIT_PER_MINUTE: "0" });
const owner: Identity = { sender: "agent://owner", canStartSessions: true, allowedModes: [], canManageRegistry: false, isObserver: false };

const dirs: string[] = [];
const open: { store: SqliteStore; kernel: Kernel }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.kernel.close();
    await o.store.close();
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(dir: string): Promise<{ store: SqliteStore; kernel: Kernel }> {
  const store = openSqliteStore({ dir });
  const kernel = await Kernel.open({ store, config, logger: silent, clock: () => fixtureNow });
  const o = { store, kernel };
  open.push(o);
  return o;
}

async function stop(o: { store: SqliteStore; kernel: Kernel }): Promise<void> {
  open.splice(open.indexOf(o), 1);
  await o.kernel.close();
  await o.store.close();
}

function history(kernel: Kernel, sessionId: string): string[] {
  const ids: string[] = [];
  for (const d of kernel.history(sessionId, 0, () => undefined)) ids.push(d.envelope.messageId);
  return ids;
}

describe("schema v1 → v2 migration", () => {
  it("answers exactly as the v1 runtime did, then restarts from the open sessions alone", async () => {
    const dir = tempDir("baton-migrate-");
    dirs.push(dir);
    fs.copyFileSync(path.join(fixture, SQLITE_FILE_NAME), path.join(dir, SQLITE_FILE_NAME));
    const total = expected.sessions.length;
    const openIds = expected.sessions.filter((s) => s.state === "SESSION_STATE_OPEN" || s.state === "SESSION_STATE_SUSPENDED");

    const first = await start(dir);
    expect(first.store.openReport.schemaVersion).toBe(3);
    // The first start replays every session once and indexes it.
    expect(first.kernel.loadReport).toMatchObject({ resident: openIds.length, indexed: total });
    expect(first.kernel.listSessions().map((m) => toJson(SessionMetadataSchema, m))).toEqual(expected.sessions);
    for (const [sid, ids] of Object.entries(expected.histories)) expect(history(first.kernel, sid), sid).toEqual(ids);
    await stop(first);

    const second = await start(dir);
    const report = second.kernel.loadReport;
    expect(report).toMatchObject({ resident: openIds.length, indexed: 0, indexRows: openIds.length });
    // Only the open sessions' records were read.
    const openRecords = openIds.reduce((n, s) => n + (expected.histories[s.sessionId]?.length ?? 0), 0);
    expect(report?.records).toBeGreaterThanOrEqual(openRecords);
    expect(report?.records).toBeLessThanOrEqual(openRecords + 2 * openIds.length); // plus their suspend/resume annotations
    const k = second.kernel;
    expect(k.listSessions().map((m) => toJson(SessionMetadataSchema, m))).toEqual(expected.sessions);
    for (const [sid, ids] of Object.entries(expected.histories)) expect(history(k, sid), sid).toEqual(ids);

    // Closed sessions answer from the index: a late resend is a duplicate, anything new is SESSION_NOT_OPEN.
    const resolved = expected.ids.resolved as string;
    const resend = buildEnvelope({
      mode: HANDOFF_MODE,
      messageType: "HandoffAccept",
      sessionId: resolved,
      messageId: "r-commit",
      payload: { handoffId: "h1" },
    });
    const dup = await k.send(owner, resend);
    expect(dup).toMatchObject({ ok: true, duplicate: true, sessionState: SessionState.RESOLVED });
    const late = await k.send(
      owner,
      buildEnvelope({
        mode: HANDOFF_MODE,
        messageType: "HandoffOffer",
        sessionId: resolved,
        payload: { handoffId: "h2", targetParticipant: "agent://target" },
      }),
    );
    expect(late.error?.code).toBe("SESSION_NOT_OPEN");
    const restart = await k.send(
      owner,
      buildEnvelope({
        mode: HANDOFF_MODE,
        messageType: "SessionStart",
        sessionId: resolved,
        messageId: "r-start",
        payload: { participants: ["agent://owner"], modeVersion: "1.0.0", configurationVersion: "config.default", ttlMs: 1000n },
      }),
    );
    expect(restart).toMatchObject({ ok: true, duplicate: true });
    // Cancel of a closed session is acknowledged with its state; an outsider is refused.
    expect((await k.control(owner, "cancel", expected.ids.cancelled as string, "again")).sessionState).toBe(SessionState.CANCELLED);
    await expect(k.control({ ...owner, sender: "agent://stranger" }, "cancel", resolved, "x")).rejects.toThrow(/may not cancel/);
    // The policy-bound session's designated lead keeps its authority after the restart.
    expect((await k.control({ ...owner, sender: "agent://lead" }, "suspend", expected.ids.policy as string, "x")).error?.code).toBe(
      "SESSION_NOT_OPEN",
    );
    // Open sessions continue where they were.
    const offer = await k.send(
      { ...owner, sender: "agent://target" },
      buildEnvelope({
        mode: HANDOFF_MODE,
        messageType: "HandoffAccept",
        sessionId: expected.ids.open as string,
        payload: { handoffId: "h1" },
      }),
    );
    expect(offer.ok, offer.error?.message).toBe(true);
  });
});
