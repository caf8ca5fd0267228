// Protobuf encoding without a copy per nesting level.
//
// protobuf-es's BinaryWriter encodes a nested message in a fork and, on
// join(), concatenates the fork's chunks into one new array before writing it
// into the parent; finish() concatenates once more. A field nested N messages
// deep is therefore copied N + 1 times. The console forwards envelopes whose
// payload can be 1 MiB three levels deep (SubscribeSessionResponse → event →
// envelope → payload): four copies of every payload per browser stream, three
// of them garbage at once, on top of the one Connect makes to frame it. On an
// idle console that garbage waits for V8's next major collection, so a few
// large streams leave tens of MiB of RSS behind after they end (README,
// "Console at scale").
//
// `installFlatJoin()` replaces BinaryWriter.prototype.join with one that
// moves the fork's chunks into the parent (its length is their sum): the
// bytes written are identical, and finish() makes the only copy. It reaches
// the writer's fields (`chunks`, `buf`, `stack`), which protobuf-es declares
// private; `flatJoinSupported()` checks that a writer still has them, and the
// install is skipped (the library's join stays) if it does not, so an upgrade
// that renames them costs the saving, never correctness. proto-join.test.ts
// checks both, and that Connect's serializer goes through the patched writer.
import { BinaryWriter } from "@bufbuild/protobuf/wire";

interface WriterState {
  chunks: Uint8Array[];
  buf: number[];
}
interface WriterInternals extends WriterState {
  stack: WriterState[];
}

const internals = (w: BinaryWriter): WriterInternals => w as unknown as WriterInternals;

/** Whether a BinaryWriter still has the fields the flat join moves. */
export function flatJoinSupported(): boolean {
  const w = internals(new BinaryWriter());
  return Array.isArray(w.chunks) && Array.isArray(w.buf) && Array.isArray(w.stack) && typeof BinaryWriter.prototype.join === "function";
}

const libraryJoin = BinaryWriter.prototype.join;
let installed = false;

function flatJoin(this: BinaryWriter): BinaryWriter {
  const w = internals(this);
  if (w.buf.length) {
    w.chunks.push(new Uint8Array(w.buf));
    w.buf = [];
  }
  const forked = w.chunks;
  let length = 0;
  for (const c of forked) length += c.length;
  const prev = w.stack.pop();
  if (!prev) throw new Error("invalid state, fork stack empty");
  w.chunks = prev.chunks;
  w.buf = prev.buf;
  this.uint32(length);
  if (w.buf.length) {
    w.chunks.push(new Uint8Array(w.buf));
    w.buf = [];
  }
  for (const c of forked) w.chunks.push(c);
  return this;
}

/** Make every BinaryWriter in this process join forks without copying them (idempotent). */
export function installFlatJoin(): boolean {
  if (installed) return true;
  if (!flatJoinSupported()) return false;
  BinaryWriter.prototype.join = flatJoin;
  installed = true;
  return true;
}

/** Restore the library's join (tests). */
export function uninstallFlatJoin(): void {
  BinaryWriter.prototype.join = libraryJoin;
  installed = false;
}
