// The recovery's report: what SQLite alone would have kept, what the
// recovered store holds, and exactly what is lost (records, sessions,
// unreadable ranges, policies), as recoverStore returns it and --apply saves
// it next to the damaged originals.
import type { UnreadableRange } from "./recovery-source";
import type { WalInspection } from "./wal";

export interface LostRecord {
  /** Position in the damaged database. */
  position: number;
  sessionId: string;
  kind: string;
  seq: number;
  reason: string;
}

export interface LostSession {
  sessionId: string;
  /** Records of this session that are lost (the first one and all later ones). */
  records: number;
  /** Seq of the first lost envelope (0 if the first lost record is an annotation). */
  fromSeq: number;
  fromPosition: number;
  reason: string;
}

export interface RecoveryReport {
  dataDir: string;
  database: string;
  /** no-damage: nothing to do; planned: dry run; applied: replaced; finished: completed an interrupted --apply. */
  status: "no-damage" | "planned" | "applied" | "finished";
  wal: WalInspection | null;
  /** The damage in words (empty when there is none). */
  damage: string;
  /** What SQLite's own recovery would have kept. */
  sqliteWouldKeep: { records: number; lastPosition: number };
  /** What the recovered store holds. */
  recovered: { records: number; lastPosition: number; sessions: number; policies: number };
  /** Records committed after the damage that SQLite alone would have dropped and that are recovered. */
  rescued: number;
  lost: {
    records: number;
    sessions: LostSession[];
    /** The first lost records, in position order. */
    sample: LostRecord[];
    unreadable: UnreadableRange[];
    /** Positions that no copy could provide a row for (sessions unknown); counted in `records`. */
    missing: Array<{ from: number; to: number }>;
    /** The forced copy could not be opened at all: what followed the damage is lost, count unknown. */
    afterDamageUnreadable: string | null;
    /** Policies whose latest version could not be recovered. */
    policies: string[];
  };
  /** The caller's verification of the recovered store (e.g. "rebuilt 12 sessions"). */
  verified: string;
  /** Where the damaged originals were copied (apply only). */
  backupDir: string | null;
  /** Full list of lost records, one JSON object per line (apply only). */
  lostRecordsFile: string | null;
}

/** The report of a folder with nothing to recover; recoverStore fills in the rest. */
export function emptyReport(dir: string, file: string, wal: WalInspection | null): RecoveryReport {
  return {
    dataDir: dir,
    database: file,
    status: "no-damage",
    wal,
    damage: "",
    sqliteWouldKeep: { records: 0, lastPosition: 0 },
    recovered: { records: 0, lastPosition: 0, sessions: 0, policies: 0 },
    rescued: 0,
    lost: { records: 0, sessions: [], sample: [], unreadable: [], missing: [], afterDamageUnreadable: null, policies: [] },
    verified: "",
    backupDir: null,
    lostRecordsFile: null,
  };
}
