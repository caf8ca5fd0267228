// What the catalog's SQLite tests share (sqlite.test.ts, sqlite-actors.test.ts,
// sqlite-waiting.test.ts): deterministic list rows and their catalog writes,
// the browser's in-memory list as the reference a page must equal, and
// catalogs (in memory or in a temporary folder) closed after each test.
import fs from "node:fs";
import { create } from "@bufbuild/protobuf";
import { afterEach } from "vitest";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { applyListQuery, type ListQuery } from "@/lib/views/list-query";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { CatalogQuery } from "./query";
import { SqliteCatalog } from "./sqlite";
import type { CatalogWrite } from "./store";

const STATES = [SessionState.OPEN, SessionState.SUSPENDED, SessionState.RESOLVED, SessionState.EXPIRED, SessionState.CANCELLED];
const STATE_KEY: Record<number, ListQuery["state"]> = {
  [SessionState.OPEN]: "open",
  [SessionState.SUSPENDED]: "suspended",
  [SessionState.RESOLVED]: "resolved",
  [SessionState.EXPIRED]: "expired",
  [SessionState.CANCELLED]: "cancelled",
};
const PHASES = ["Pending", "OfferPending", "Accepted", "Committed", "InProgress", "Failed", ""];
const WORDS = ["pager", "rota", "deploy", "billing", "search", "index", "night shift", "eu west", "q3 report"];

/** A deterministic pseudo-random generator (tests must not flake). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function summary(i: number, r: () => number): SessionSummary {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const id = `sess-${String(i).padStart(6, "0")}-${"x".repeat(16)}`;
  const owner = `agent:${pick(["alice", "bob", "carol", "dave", "erin"])}`;
  const target = r() < 0.2 ? "" : `human:${pick(["zoe", "yann", "xia", "walt"])}`;
  const expires = r() < 0.3 ? 0 : 1_700_000_000_000 + Math.floor(r() * 1000) * 1000;
  return create(SessionSummarySchema, {
    metadata: create(SessionMetadataSchema, {
      sessionId: id,
      mode: r() < 0.5 ? HANDOFF_MODE : TASK_MODE,
      state: pick(STATES),
      startedAtUnixMs: BigInt(1_700_000_000_000 + Math.floor(r() * 50) * 1000),
      expiresAtUnixMs: BigInt(expires),
      participants: [owner, ...(target ? [target] : [])],
      initiator: owner,
      contextId: r() < 0.1 ? `ctx-${i}` : "",
    }),
    phase: pick(PHASES),
    intent: `${pick(WORDS)} ${pick(WORDS)}`,
    scope: r() < 0.5 ? pick(WORDS) : "",
    currentOwner: owner,
    currentTarget: target,
    // Coarse activity so ties (and the tie-break) happen often.
    lastActivityUnixMs: BigInt(1_700_000_000_000 + Math.floor(r() * 40) * 1000),
    eventCount: BigInt(1 + Math.floor(r() * 9)),
  });
}

export function write(s: SessionSummary, extra: Partial<CatalogWrite> = {}): CatalogWrite {
  return { summary: s, folded: Number(s.eventCount), final: true, needsRead: false, nextActors: [], ...extra };
}

export const ids = (rows: readonly SessionSummary[]) => rows.map((s) => s.metadata?.sessionId ?? "");

/** The browser's in-memory list (lib/views/list-query.ts) is the reference. */
export function reference(rows: SessionSummary[], q: CatalogQuery): SessionSummary[] {
  const lq: ListQuery = {
    participant: q.participant,
    q: "",
    waiting: q.waitingOn ?? "",
    stuck: false,
    sort: q.sort,
    dir: q.ascending ? "asc" : "desc",
    ...(q.mode ? { mode: q.mode === HANDOFF_MODE ? "handoff" : "task" } : {}),
    ...(q.state !== undefined ? { state: STATE_KEY[q.state] } : {}),
    ...(q.phase ? { phase: q.phase as ListQuery["phase"] & string } : {}),
  };
  let out = applyListQuery(rows, lq);
  if (q.text) {
    // The catalog's full text also covers participants.
    out = out.filter((s) => {
      const m = s.metadata;
      const hay = [
        s.intent,
        s.scope,
        m?.sessionId ?? "",
        s.currentOwner,
        s.currentTarget,
        s.phase,
        m?.mode ?? "",
        m?.contextId ?? "",
        ...(m?.participants ?? []),
        m?.initiator ?? "",
      ];
      return hay.some((h) => h.toLowerCase().includes(q.text));
    });
  }
  return out;
}

/** Catalogs and temporary folders the current test opened: closed and removed after it. */
export const open: SqliteCatalog[] = [];
export const dirs: string[] = [];

/** Close and remove what each test of the calling file opened; call once at its top level. */
export function closeAfterEach(): void {
  afterEach(() => {
    for (const c of open.splice(0)) c.close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
}

export function catalog(file = ":memory:"): SqliteCatalog {
  const c = new SqliteCatalog({ path: file });
  open.push(c);
  return c;
}

export function q(init: Partial<CatalogQuery> = {}): CatalogQuery {
  return { participant: "", text: "", sort: "activity", ascending: false, ...init };
}
