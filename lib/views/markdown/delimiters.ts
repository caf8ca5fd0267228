// The inline pass's working list (inline.ts): the nodes found so far as a
// linked list, the stack of emphasis and strikethrough delimiter runs, and the
// rule that pairs those runs into em, strong and del (CommonMark's "process
// emphasis", nesting bounded by MAX_INLINE_DEPTH).
import { MAX_INLINE_DEPTH, type MdInline } from "./tree";

export interface Item {
  node: MdInline;
  prev: Item | null;
  next: Item | null;
  depth: number;
  /** Set while the item is an emphasis/strikethrough delimiter run. */
  delim: Delim | null;
  /** Bracket-opener items are never merged with neighbouring text. */
  fixed: boolean;
}

export interface Delim {
  ch: "*" | "_" | "~";
  len: number;
  orig: number;
  canOpen: boolean;
  canClose: boolean;
  seq: number;
  item: Item;
  prev: Delim | null;
  next: Delim | null;
}

const UNICODE_PUNCT = /[\p{P}\p{S}]/u;
const UNICODE_SPACE = /\s/u;

function charClass(ch: string | undefined): "space" | "punct" | "other" {
  if (ch === undefined || UNICODE_SPACE.test(ch)) return "space";
  return UNICODE_PUNCT.test(ch) ? "punct" : "other";
}

/** Whether a run of `ch` between the characters `before` and `after` can open and close emphasis. */
export function flanking(ch: Delim["ch"], before: string | undefined, after: string | undefined): { canOpen: boolean; canClose: boolean } {
  const b = charClass(before);
  const a = charClass(after);
  const left = a !== "space" && (a !== "punct" || b !== "other");
  const right = b !== "space" && (b !== "punct" || a !== "other");
  if (ch === "_") return { canOpen: left && (!right || b === "punct"), canClose: right && (!left || a === "punct") };
  return { canOpen: left, canClose: right };
}

/** The plain text of nodes (an image's alt text, a break as a newline). */
export function textOf(nodes: MdInline[]): string {
  let out = "";
  for (const n of nodes) {
    if (n.type === "text" || n.type === "code") out += n.text;
    else if (n.type === "image") out += n.alt;
    else if (n.type === "break") out += "\n";
    else out += textOf(n.children);
  }
  return out;
}

export class InlineList {
  readonly root: Item = { node: { type: "text", text: "" }, prev: null, next: null, depth: 0, delim: null, fixed: true };
  private tail: Item = this.root;
  private dHead: Delim | null = null;
  /** The newest delimiter run (a bracket remembers it as the bottom of its emphasis). */
  dTail: Delim | null = null;
  private seq = 0;

  append(node: MdInline, depth = 0, fixed = false): Item {
    const item: Item = { node, prev: this.tail, next: null, depth, delim: null, fixed };
    this.tail.next = item;
    this.tail = item;
    return item;
  }

  appendText(text: string): void {
    if (text === "") return;
    const tail = this.tail;
    if (tail.node.type === "text" && !tail.fixed && !tail.delim) tail.node.text += text;
    else this.append({ type: "text", text });
  }

  /** A delimiter run of `len` × `ch`, pushed on the delimiter stack. */
  appendRun(ch: Delim["ch"], len: number, canOpen: boolean, canClose: boolean): void {
    const item = this.append({ type: "text", text: "" });
    const d: Delim = { ch, len, orig: len, canOpen, canClose, seq: this.seq++, item, prev: this.dTail, next: null };
    item.delim = d;
    if (this.dTail) this.dTail.next = d;
    else this.dHead = d;
    this.dTail = d;
  }

  unlink(item: Item): void {
    const prev = item.prev as Item;
    prev.next = item.next;
    if (item.next) item.next.prev = prev;
    else this.tail = prev;
  }

  /** Drop everything after `item`: it becomes the last item. */
  cutAfter(item: Item): void {
    item.next = null;
    this.tail = item;
  }

  /** The items after `from` up to (not including) `to`, as merged nodes, plus their nesting depth. */
  collect(from: Item, to: Item | null): { nodes: MdInline[]; depth: number } {
    const nodes: MdInline[] = [];
    let depth = 0;
    for (let it = from.next; it && it !== to; it = it.next) {
      const node: MdInline = it.delim ? { type: "text", text: it.delim.ch.repeat(it.delim.len) } : it.node;
      const last = nodes[nodes.length - 1];
      if (node.type === "text" && last?.type === "text") nodes[nodes.length - 1] = { type: "text", text: last.text + node.text };
      else nodes.push(node);
      if (it.depth > depth) depth = it.depth;
    }
    return { nodes, depth };
  }

  private removeDelim(d: Delim): void {
    if (d.prev) d.prev.next = d.next;
    else this.dHead = d.next;
    if (d.next) d.next.prev = d.prev;
    else this.dTail = d.prev;
    d.item.delim = null;
    d.item.node = { type: "text", text: d.ch.repeat(d.len) };
  }

  /** Pair the delimiter runs above `bottom` into em, strong and del; the rest become text. */
  processEmphasis(bottom: Delim | null): void {
    const floorFor = new Map<string, number>();
    const bottomSeq = bottom ? bottom.seq : -1;
    let closer: Delim | null = bottom ? bottom.next : this.dHead;
    while (closer) {
      if (!closer.canClose) {
        closer = closer.next;
        continue;
      }
      const key = closer.ch === "~" ? `~${closer.len}` : `${closer.ch}${closer.canOpen ? 1 : 0}${closer.orig % 3}`;
      const floor = Math.max(bottomSeq, floorFor.get(key) ?? -1);
      let opener: Delim | null = closer.prev;
      while (opener && opener.seq > floor) {
        if (opener.ch === closer.ch && opener.canOpen) {
          const ok =
            closer.ch === "~"
              ? opener.len === closer.len
              : !(
                  (opener.canClose || closer.canOpen) &&
                  (opener.orig + closer.orig) % 3 === 0 &&
                  !(opener.orig % 3 === 0 && closer.orig % 3 === 0)
                );
          if (ok) break;
        }
        opener = opener.prev;
      }
      if (!opener || opener.seq <= floor) {
        floorFor.set(key, closer.prev ? closer.prev.seq : -1);
        const next: Delim | null = closer.next;
        if (!closer.canOpen) this.removeDelim(closer);
        closer = next;
        continue;
      }
      const use = closer.ch === "~" ? closer.len : opener.len >= 2 && closer.len >= 2 ? 2 : 1;
      opener.len -= use;
      closer.len -= use;
      const inner = this.collect(opener.item, closer.item);
      const marks = closer.ch.repeat(use);
      let node: MdInline;
      let depth: number;
      if (inner.depth >= MAX_INLINE_DEPTH) {
        // Too deep: keep the markers and everything between them as literal text.
        node = { type: "text", text: marks + textOf(inner.nodes) + marks };
        depth = 0;
      } else {
        node = { type: closer.ch === "~" ? "del" : use === 2 ? "strong" : "em", children: inner.nodes };
        depth = inner.depth + 1;
      }
      const item: Item = { node, prev: opener.item, next: closer.item, depth, delim: null, fixed: false };
      opener.item.next = item;
      closer.item.prev = item;
      opener.next = closer;
      closer.prev = opener;
      if (opener.len === 0) {
        this.unlink(opener.item);
        this.removeDelim(opener);
      }
      if (closer.len === 0) {
        const next: Delim | null = closer.next;
        this.unlink(closer.item);
        this.removeDelim(closer);
        closer = next;
      }
    }
    while (this.dTail && this.dTail !== bottom) this.removeDelim(this.dTail);
  }
}
