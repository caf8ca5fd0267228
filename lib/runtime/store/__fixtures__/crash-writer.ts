// Child process for sqlite.test.ts (not a test itself).
//
// Usage: node --import tsx crash-writer.ts <dir> <bursts> <perBurst>
//
// Appends `bursts` bursts of `perBurst` single-record appends (each burst in
// one event-loop turn, so one group commit), printing "ack <position>
// <session> <seq>" synchronously as each append promise resolves. Then it
// starts a final burst of larger records and SIGKILLs itself from the first
// reaction to that burst's commit: the final transaction is in the WAL but
// none of its appends was acknowledged. Prints "kill <first> <last>" with the
// positions of that final burst just before dying.
import fs from "node:fs";
import { openSqliteStore } from "../sqlite";
import type { LogRecord } from "../types";

const [dir, burstsArg, perBurstArg] = process.argv.slice(2);
if (!dir || !burstsArg || !perBurstArg) throw new Error("usage: crash-writer.ts <dir> <bursts> <perBurst>");
const bursts = Number(burstsArg);
const perBurst = Number(perBurstArg);

const out = (line: string): void => {
  fs.writeSync(1, `${line}\n`);
};

const store = openSqliteStore({ dir });
const lastSeq = new Map<string, number>();
let position = 0;

function record(i: number, size: number): { record: LogRecord; position: number } {
  const sessionId = `session-${i % 5}`;
  const seq = (lastSeq.get(sessionId) ?? 0) + 1;
  lastSeq.set(sessionId, seq);
  const envelope = new Uint8Array(size);
  for (let k = 0; k < size; k++) envelope[k] = (seq * 31 + k) & 0xff;
  return { record: { sessionId, kind: "envelope", seq, recvMs: Date.now(), envelope }, position: ++position };
}

async function main(): Promise<void> {
  for (let b = 0; b < bursts; b++) {
    const writes: Promise<void>[] = [];
    for (let i = 0; i < perBurst; i++) {
      const { record: r, position: pos } = record(i, 40 + ((b * perBurst + i) % 200));
      writes.push(store.append([r]).then(() => out(`ack ${pos} ${r.sessionId} ${r.seq}`)));
    }
    await Promise.all(writes);
  }
  const first = position + 1;
  for (let i = 0; i < perBurst; i++) {
    const { record: r, position: pos } = record(i, 600);
    const write = store.append([r]);
    if (i === 0) {
      // Registered before any ack reaction of this burst, so it runs first.
      void write.then(() => {
        out(`kill ${first} ${first + perBurst - 1}`);
        process.kill(process.pid, "SIGKILL");
      });
    }
    void write.then(() => out(`ack ${pos} ${r.sessionId} ${r.seq}`));
  }
}

void main();
