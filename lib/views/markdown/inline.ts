// The inline pass: one left-to-right scan with a delimiter stack (emphasis,
// strikethrough, links, images, code spans, autolinks), nesting bounded.
// ---------------------------------------------------------------------------
// Inline content
import { entityAt, isAsciiPunct, isSpace, normalizeLabel, unescapeText, type Ref } from "./text";
import { MAX_INLINE_DEPTH, safeHref, type MdInline } from "./tree";

interface Item {
  node: MdInline;
  prev: Item | null;
  next: Item | null;
  depth: number;
  /** Set while the item is an emphasis/strikethrough delimiter run. */
  delim: Delim | null;
  /** Bracket-opener items are never merged with neighbouring text. */
  fixed: boolean;
}

interface Delim {
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

interface Bracket {
  item: Item;
  image: boolean;
  /** Index of the `[` in the source. */
  pos: number;
  delimBottom: Delim | null;
  linksBefore: number;
}

const UNICODE_PUNCT = /[\p{P}\p{S}]/u;
const UNICODE_SPACE = /\s/u;

function charClass(ch: string | undefined): "space" | "punct" | "other" {
  if (ch === undefined || UNICODE_SPACE.test(ch)) return "space";
  return UNICODE_PUNCT.test(ch) ? "punct" : "other";
}

function textOf(nodes: MdInline[]): string {
  let out = "";
  for (const n of nodes) {
    if (n.type === "text" || n.type === "code") out += n.text;
    else if (n.type === "image") out += n.alt;
    else if (n.type === "break") out += "\n";
    else out += textOf(n.children);
  }
  return out;
}

/** Links cannot contain links: a bare URL inside link text stays text. */
function unwrapLinks(nodes: MdInline[], out: MdInline[] = []): MdInline[] {
  for (const n of nodes) {
    if (n.type === "link") unwrapLinks(n.children, out);
    else if (n.type === "strong" || n.type === "em" || n.type === "del") out.push({ type: n.type, children: unwrapLinks(n.children) });
    else out.push(n);
  }
  return out;
}

interface LinkTail {
  dest: string;
  title: string | null;
  end: number;
}

/** Parses `(destination "title")` starting at the `(`. */
function inlineLinkTail(s: string, open: number): LinkTail | null {
  let k = open + 1;
  const skipWs = (): void => {
    while (k < s.length && (s[k] === " " || s[k] === "\t" || s[k] === "\n")) k++;
  };
  skipWs();
  let dest: string;
  if (s[k] === "<") {
    const begin = k + 1;
    k = begin;
    while (k < s.length && s[k] !== ">") {
      if (s[k] === "\n" || s[k] === "<") return null;
      k += s[k] === "\\" ? 2 : 1;
    }
    if (s[k] !== ">") return null;
    dest = s.slice(begin, k);
    k++;
  } else {
    const begin = k;
    let parens = 0;
    while (k < s.length) {
      const ch = s[k] as string;
      if (ch === "\\" && isAsciiPunct(s[k + 1])) k += 2;
      else if (ch === "(") {
        if (++parens > 32) return null;
        k++;
      } else if (ch === ")") {
        if (parens === 0) break;
        parens--;
        k++;
      } else if (ch.charCodeAt(0) <= 32) break;
      else k++;
    }
    if (parens !== 0) return null;
    dest = s.slice(begin, k);
  }
  const beforeWs = k;
  skipWs();
  let title: string | null = null;
  const q = s[k];
  if (k > beforeWs && (q === '"' || q === "'" || q === "(")) {
    const close = q === "(" ? ")" : q;
    const begin = k + 1;
    k = begin;
    while (k < s.length && s[k] !== close) {
      if (q === "(" && s[k] === "(") return null;
      k += s[k] === "\\" ? 2 : 1;
    }
    if (s[k] !== close) return null;
    title = unescapeText(s.slice(begin, k));
    k++;
    skipWs();
  }
  if (s[k] !== ")") return null;
  return { dest: unescapeText(dest), title, end: k + 1 };
}

const AUTOLINK_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]{1,31}:/;
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const DOMAIN = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/** `<scheme:…>` or `<user@host>` at s[i] === "<". */
function angleAutolink(s: string, i: number): { href: string; text: string; end: number } | null {
  let k = i + 1;
  while (k < s.length && k - i < 2048) {
    const c = s.charCodeAt(k);
    if (c === 62 /* > */) break;
    if (c <= 32 || c === 60 /* < */) return null;
    k++;
  }
  if (s[k] !== ">") return null;
  const body = s.slice(i + 1, k);
  let href: string | null = null;
  if (AUTOLINK_SCHEME.test(body)) href = safeHref(body);
  else if (body.length <= 254 && EMAIL.test(body)) href = "mailto:" + body;
  return href === null ? null : { href, text: body, end: k + 1 };
}

const DOMAIN_CHAR = /[A-Za-z0-9_.-]/;

/** GFM bare autolinks: `https://…`, `http://…`, `www.…` at s[i]. */
function bareAutolink(s: string, i: number): { href: string; text: string; end: number } | null {
  const head = s.slice(i, i + 8).toLowerCase();
  let hostStart: number;
  let prefix = "";
  if (head.startsWith("https://")) hostStart = i + 8;
  else if (head.startsWith("http://")) hostStart = i + 7;
  else if (head.startsWith("www.")) {
    hostStart = i;
    prefix = "http://";
  } else return null;
  // The domain decides, with bounded work, whether this is a link at all; only then scan the rest.
  let hostEnd = hostStart;
  while (hostEnd < s.length && DOMAIN_CHAR.test(s[hostEnd] as string)) {
    if (++hostEnd - hostStart > 253) return null;
  }
  let minEnd = hostEnd;
  while (minEnd > hostStart && (s[minEnd - 1] === "." || s[minEnd - 1] === "_")) minEnd--;
  const host = s.slice(hostStart, minEnd);
  if (!DOMAIN.test(host) || (prefix && host.length < 5)) return null;
  let end = hostEnd;
  let opens = 0;
  let closes = 0;
  while (end < s.length) {
    const ch = s[end] as string;
    if (ch === "<" || UNICODE_SPACE.test(ch)) break;
    if (ch === "(") opens++;
    else if (ch === ")") closes++;
    end++;
  }
  // Trailing punctuation is not part of the link; neither is an unbalanced `)` or a trailing entity.
  while (end > minEnd) {
    const ch = s[end - 1] as string;
    if ("?!.,:*_~'\"".includes(ch)) end--;
    else if (ch === ")" && closes > opens) {
      closes--;
      end--;
    } else if (ch === ";") {
      let a = end - 2;
      while (a > minEnd && /[A-Za-z0-9]/.test(s[a] as string)) a--;
      if (s[a] === "&" && a < end - 2) end = a;
      else break;
    } else break;
  }
  if (end < minEnd) end = minEnd;
  const text = s.slice(i, end);
  const href = safeHref(prefix + text);
  return href === null ? null : { href, text, end };
}

const INLINE_SYNTAX = /[\\`*_~[\]!<&\n]|https?:\/\/|www\./i;

/** Parses one paragraph's (heading's, cell's) inline content. */
export function parseInline(s: string, refs: Map<string, Ref>): MdInline[] {
  if (s === "") return [];
  if (!INLINE_SYNTAX.test(s)) return [{ type: "text", text: s }];
  const root: Item = { node: { type: "text", text: "" }, prev: null, next: null, depth: 0, delim: null, fixed: true };
  let tail = root;
  let dHead: Delim | null = null;
  let dTail: Delim | null = null;
  let seq = 0;
  const brackets: Bracket[] = [];
  let links = 0;
  let lastBracket = -1;
  let runs: Map<number, number[]> | null = null;
  const cursors = new Map<number, number>();

  const append = (node: MdInline, depth = 0, fixed = false): Item => {
    const item: Item = { node, prev: tail, next: null, depth, delim: null, fixed };
    tail.next = item;
    tail = item;
    return item;
  };
  const appendText = (text: string): void => {
    if (text === "") return;
    if (tail.node.type === "text" && !tail.fixed && !tail.delim) tail.node.text += text;
    else append({ type: "text", text });
  };
  const unlink = (item: Item): void => {
    const prev = item.prev as Item;
    prev.next = item.next;
    if (item.next) item.next.prev = prev;
    else tail = prev;
  };
  const removeDelim = (d: Delim): void => {
    if (d.prev) d.prev.next = d.next;
    else dHead = d.next;
    if (d.next) d.next.prev = d.prev;
    else dTail = d.prev;
    d.item.delim = null;
    d.item.node = { type: "text", text: d.ch.repeat(d.len) };
  };
  /** The items after `from` up to (not including) `to`, as merged nodes, plus their nesting depth. */
  const collect = (from: Item, to: Item | null): { nodes: MdInline[]; depth: number } => {
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
  };

  const processEmphasis = (bottom: Delim | null): void => {
    const floorFor = new Map<string, number>();
    const bottomSeq = bottom ? bottom.seq : -1;
    let closer: Delim | null = bottom ? bottom.next : dHead;
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
        if (!closer.canOpen) removeDelim(closer);
        closer = next;
        continue;
      }
      const use = closer.ch === "~" ? closer.len : opener.len >= 2 && closer.len >= 2 ? 2 : 1;
      opener.len -= use;
      closer.len -= use;
      const inner = collect(opener.item, closer.item);
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
        unlink(opener.item);
        removeDelim(opener);
      }
      if (closer.len === 0) {
        const next: Delim | null = closer.next;
        unlink(closer.item);
        removeDelim(closer);
        closer = next;
      }
    }
    while (dTail && dTail !== bottom) removeDelim(dTail);
  };

  /** Handles `]` at s[i]; returns the index to continue from. */
  const closeBracket = (i: number): number => {
    const prevBracket = lastBracket;
    lastBracket = i;
    const op = brackets[brackets.length - 1];
    if (!op) {
      appendText("]");
      return i + 1;
    }
    if (!op.image && op.linksBefore < links) {
      brackets.pop();
      appendText("]");
      return i + 1;
    }
    const ownLabel = (): string | null => (prevBracket === op.pos && i - op.pos <= 1000 ? normalizeLabel(s.slice(op.pos + 1, i)) : null);
    const lookup = (label: string | null): Ref | null => (label ? (refs.get(label) ?? null) : null);
    let target: { href: string | null; title: string | null } | null = null;
    let end = i + 1;
    if (s[i + 1] === "(") {
      const tail = inlineLinkTail(s, i + 1);
      if (tail) {
        target = { href: safeHref(tail.dest), title: tail.title };
        end = tail.end;
      }
    }
    if (!target && refs.size > 0) {
      // Full `[text][label]` or collapsed `[text][]`; otherwise shortcut `[text]`.
      let k = i + 2;
      if (s[i + 1] === "[") while (k < s.length && k - i <= 1000 && s[k] !== "]" && s[k] !== "[") k += s[k] === "\\" ? 2 : 1;
      if (s[i + 1] === "[" && s[k] === "]") {
        const label = normalizeLabel(s.slice(i + 2, k));
        target = lookup(label === "" ? ownLabel() : label);
        if (target) end = k + 1;
      } else target = lookup(ownLabel());
    }
    brackets.pop();
    if (!target) {
      appendText("]");
      return i + 1;
    }
    processEmphasis(op.delimBottom);
    const inner = collect(op.item, null);
    if (!op.image) links++;
    if (!op.image && (target.href === null || inner.depth >= MAX_INLINE_DEPTH)) {
      // Not a safe target (or too deep): the link text stays, as plain content.
      unlink(op.item);
      return end;
    }
    // Everything after the opener becomes the new node's content.
    op.item.next = null;
    tail = op.item;
    unlink(op.item);
    if (op.image) {
      append({ type: "image", src: target.href, alt: textOf(inner.nodes), title: target.title });
      return end;
    }
    if (target.href !== null)
      append({ type: "link", href: target.href, title: target.title, children: unwrapLinks(inner.nodes) }, inner.depth + 1);
    return end;
  };

  const n = s.length;
  let i = 0;
  let textStart = 0;
  const flush = (to: number): void => {
    if (to > textStart) appendText(s.slice(textStart, to));
  };
  /** An autolink found at `at` (`<…>` or bare): its link node; returns where scanning resumes. */
  const autolink = (at: number, auto: { href: string; text: string; end: number }): number => {
    flush(at);
    append({ type: "link", href: auto.href, title: null, children: [{ type: "text", text: auto.text }] }, 1);
    return auto.end;
  };
  while (i < n) {
    const ch = s[i] as string;
    let next = -1;
    switch (ch) {
      case "\\": {
        flush(i);
        const c2 = s[i + 1];
        if (c2 === "\n") {
          append({ type: "break" });
          next = i + 2;
          while (isSpace(s[next])) next++;
        } else if (isAsciiPunct(c2)) {
          appendText(c2 as string);
          next = i + 2;
        } else {
          appendText("\\");
          next = i + 1;
        }
        break;
      }
      case "`": {
        flush(i);
        let k = i;
        while (s[k] === "`") k++;
        const len = k - i;
        const close = findCodeClose(k, len);
        if (close < 0) {
          appendText(s.slice(i, k));
          next = k;
        } else {
          let code = s.slice(k, close).replace(/\n/g, " ");
          if (code.length > 1 && code[0] === " " && code[code.length - 1] === " " && code.trim() !== "") code = code.slice(1, -1);
          append({ type: "code", text: code });
          next = close + len;
        }
        break;
      }
      case "*":
      case "_":
      case "~": {
        flush(i);
        let k = i;
        while (s[k] === ch) k++;
        const len = k - i;
        if (ch === "~" && len > 2) {
          appendText(s.slice(i, k));
          next = k;
          break;
        }
        const before = charClass(i > 0 ? s[i - 1] : undefined);
        const after = charClass(s[k]);
        const left = after !== "space" && (after !== "punct" || before !== "other");
        const right = before !== "space" && (before !== "punct" || after !== "other");
        let canOpen = left;
        let canClose = right;
        if (ch === "_") {
          canOpen = left && (!right || before === "punct");
          canClose = right && (!left || after === "punct");
        }
        const item = append({ type: "text", text: "" });
        const d: Delim = { ch, len, orig: len, canOpen, canClose, seq: seq++, item, prev: dTail, next: null };
        item.delim = d;
        if (dTail) dTail.next = d;
        else dHead = d;
        dTail = d;
        next = k;
        break;
      }
      case "!":
        if (s[i + 1] === "[") {
          flush(i);
          brackets.push({
            item: append({ type: "text", text: "![" }, 0, true),
            image: true,
            pos: i + 1,
            delimBottom: dTail,
            linksBefore: links,
          });
          lastBracket = i + 1;
          next = i + 2;
        }
        break;
      case "[":
        flush(i);
        brackets.push({ item: append({ type: "text", text: "[" }, 0, true), image: false, pos: i, delimBottom: dTail, linksBefore: links });
        lastBracket = i;
        next = i + 1;
        break;
      case "]":
        flush(i);
        next = closeBracket(i);
        break;
      case "<": {
        const auto = angleAutolink(s, i);
        if (auto) next = autolink(i, auto);
        break;
      }
      case "&": {
        const e = entityAt(s, i);
        if (e !== null) {
          flush(i);
          appendText(e.text);
          next = i + e.len;
        }
        break;
      }
      case "\n": {
        // Trailing spaces before a newline are still unflushed source text: two or more make a hard break.
        let e = i;
        while (e > textStart && s[e - 1] === " ") e--;
        flush(e);
        if (i - e >= 2) append({ type: "break" });
        else appendText("\n");
        next = i + 1;
        while (isSpace(s[next])) next++;
        break;
      }
      case "h":
      case "H":
      case "w":
      case "W": {
        const prev = s[i - 1];
        if (i === 0 || prev === undefined || UNICODE_SPACE.test(prev) || "*_~(".includes(prev)) {
          const auto = bareAutolink(s, i);
          if (auto) next = autolink(i, auto);
        }
        break;
      }
    }
    if (next < 0) i++;
    else i = textStart = next;
  }
  flush(n);
  processEmphasis(null);
  return collect(root, null).nodes;

  // Code span closers: the first backtick run of exactly the opener's length.
  // Runs are indexed once, and each length's cursor only moves forward.
  function findCodeClose(from: number, len: number): number {
    if (!runs) {
      runs = new Map();
      for (let k = 0; k < n;) {
        if (s[k] !== "`") {
          k++;
          continue;
        }
        const start = k;
        while (s[k] === "`") k++;
        const list = runs.get(k - start) ?? [];
        list.push(start);
        runs.set(k - start, list);
      }
    }
    const list = runs.get(len);
    if (!list) return -1;
    let c = cursors.get(len) ?? 0;
    while (c < list.length && (list[c] as number) < from) c++;
    cursors.set(len, c);
    return c < list.length ? (list[c] as number) : -1;
  }
}
