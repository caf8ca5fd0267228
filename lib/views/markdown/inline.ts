// The inline pass: one left-to-right scan of a paragraph's (heading's,
// cell's) text with a delimiter stack (emphasis and strikethrough in
// delimiters.ts), brackets for links and images, code spans, and autolinks
// (links.ts), nesting bounded.
import { InlineList, flanking, textOf, type Delim, type Item } from "./delimiters";
import { angleAutolink, bareAutolink, inlineLinkTail } from "./links";
import { entityAt, isAsciiPunct, isSpace, normalizeLabel, type Ref } from "./text";
import { MAX_INLINE_DEPTH, safeHref, type MdInline } from "./tree";

interface Bracket {
  item: Item;
  image: boolean;
  /** Index of the `[` in the source. */
  pos: number;
  delimBottom: Delim | null;
  linksBefore: number;
}

const UNICODE_SPACE = /\s/u;

/** Links cannot contain links: a bare URL inside link text stays text. */
function unwrapLinks(nodes: MdInline[], out: MdInline[] = []): MdInline[] {
  for (const n of nodes) {
    if (n.type === "link") unwrapLinks(n.children, out);
    else if (n.type === "strong" || n.type === "em" || n.type === "del") out.push({ type: n.type, children: unwrapLinks(n.children) });
    else out.push(n);
  }
  return out;
}

const INLINE_SYNTAX = /[\\`*_~[\]!<&\n]|https?:\/\/|www\./i;

/** Parses one paragraph's (heading's, cell's) inline content. */
export function parseInline(s: string, refs: Map<string, Ref>): MdInline[] {
  if (s === "") return [];
  if (!INLINE_SYNTAX.test(s)) return [{ type: "text", text: s }];
  const list = new InlineList();
  const brackets: Bracket[] = [];
  let links = 0;
  let lastBracket = -1;
  let runs: Map<number, number[]> | null = null;
  const cursors = new Map<number, number>();

  const append = (node: MdInline, depth = 0, fixed = false): Item => list.append(node, depth, fixed);
  const appendText = (text: string): void => list.appendText(text);

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
    list.processEmphasis(op.delimBottom);
    const inner = list.collect(op.item, null);
    if (!op.image) links++;
    if (!op.image && (target.href === null || inner.depth >= MAX_INLINE_DEPTH)) {
      // Not a safe target (or too deep): the link text stays, as plain content.
      list.unlink(op.item);
      return end;
    }
    // Everything after the opener becomes the new node's content.
    list.cutAfter(op.item);
    list.unlink(op.item);
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
        const { canOpen, canClose } = flanking(ch, i > 0 ? s[i - 1] : undefined, s[k]);
        list.appendRun(ch, len, canOpen, canClose);
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
            delimBottom: list.dTail,
            linksBefore: links,
          });
          lastBracket = i + 1;
          next = i + 2;
        }
        break;
      case "[":
        flush(i);
        brackets.push({
          item: append({ type: "text", text: "[" }, 0, true),
          image: false,
          pos: i,
          delimBottom: list.dTail,
          linksBefore: links,
        });
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
  list.processEmphasis(null);
  return list.collect(list.root, null).nodes;

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
