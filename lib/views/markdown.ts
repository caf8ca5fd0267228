// A small markdown parser for context payloads, written for Baton. It turns
// text into a typed tree that features/session/Markdown.tsx renders with
// plain React elements, so nothing in a payload can become markup: raw HTML is
// kept as literal text, link targets go through safeHref, and images are only
// described (the renderer never fetches them).
//
// Coverage is CommonMark-like plus the GFM pieces people paste into runbooks
// (tables, task lists, strikethrough, bare autolinks). Hostile input is
// bounded: container nesting stops at MAX_DEPTH and inline nesting at
// MAX_INLINE_DEPTH (deeper content stays literal text), the inline pass is a
// single left-to-right scan with a delimiter stack, and no regular expression
// here can backtrack over more than a bounded stretch of the input.

export type MdInline =
  | { type: "text"; text: string }
  | { type: "strong"; children: MdInline[] }
  | { type: "em"; children: MdInline[] }
  | { type: "del"; children: MdInline[] }
  | { type: "code"; text: string }
  | { type: "link"; href: string; title: string | null; children: MdInline[] }
  | { type: "image"; src: string | null; alt: string; title: string | null }
  | { type: "break" };

export type MdAlign = "left" | "center" | "right" | null;

export interface MdListItem {
  /** null: not a task item; otherwise the state of its `[ ]` / `[x]` box. */
  checked: boolean | null;
  children: MdBlock[];
}

export type MdBlock =
  | { type: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; children: MdInline[] }
  | { type: "paragraph"; children: MdInline[] }
  | { type: "code"; lang: string | null; text: string }
  | { type: "hr" }
  | { type: "blockquote"; children: MdBlock[] }
  | { type: "list"; ordered: boolean; start: number | null; tight: boolean; items: MdListItem[] }
  | { type: "table"; align: MdAlign[]; head: MdInline[][]; rows: MdInline[][][] };

/** Container nesting (blockquotes, list items) beyond this is kept as plain text. */
export const MAX_DEPTH = 16;
/** Inline nesting (emphasis inside emphasis inside a link …) beyond this stays literal. */
export const MAX_INLINE_DEPTH = 16;

// ---------------------------------------------------------------------------
// URLs

const SAFE_SCHEMES = new Set(["http", "https", "mailto"]);

/**
 * The href to use for a link target, or null when it must not become a link.
 * Allowed: http:, https:, mailto:, `#fragment`, and `/path`, `./path`, `../path`.
 * Anything else is refused, including every other scheme, protocol-relative
 * `//host`, and any target containing control characters (browsers drop tabs
 * and newlines inside URLs, which is how `java\tscript:` sneaks through).
 */
export function safeHref(url: string): string | null {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return null;
  }
  const u = url.trim();
  if (u === "") return null;
  const first = u[0];
  if (first === "#") return u;
  if (first === "/") return u[1] === "/" || u[1] === "\\" ? null : u;
  if (u.startsWith("./") || u.startsWith("../")) return u;
  const colon = u.indexOf(":");
  if (colon < 1) return null;
  const scheme = u.slice(0, colon).toLowerCase();
  if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) return null;
  return SAFE_SCHEMES.has(scheme) ? u : null;
}

// ---------------------------------------------------------------------------
// Shared character helpers

const ASCII_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

function isAsciiPunct(ch: string | undefined): boolean {
  return ch !== undefined && ch.length === 1 && ASCII_PUNCT.includes(ch);
}

function isSpace(ch: string | undefined): boolean {
  return ch === " " || ch === "\t";
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) if (!isSpace(line[i])) return false;
  return true;
}

function leadingSpaces(line: string): number {
  let n = 0;
  while (n < line.length && line.charCodeAt(n) === 32) n++;
  return n;
}

/** Expands tabs in a line's leading whitespace to spaces (tab stops of 4). */
function expandLeadingTabs(line: string): string {
  let i = 0;
  while (i < line.length && isSpace(line[i])) i++;
  const lead = line.slice(0, i);
  if (!lead.includes("\t")) return line;
  let col = 0;
  for (const ch of lead) col += ch === "\t" ? 4 - (col % 4) : 1;
  return " ".repeat(col) + line.slice(i);
}

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
  "&apos;": "'",
  "&nbsp;": "\u00a0",
};

/** The entity at s[i] (which is `&`), if it is one of the few decoded ones. */
function entityAt(s: string, i: number): { text: string; len: number } | null {
  for (let k = i + 1; k < s.length && k - i <= 6; k++) {
    if (s[k] !== ";") continue;
    const text = ENTITIES[s.slice(i, k + 1)];
    return text === undefined ? null : { text, len: k + 1 - i };
  }
  return null;
}

/** Backslash escapes and the few known entities, for link targets and titles. */
function unescapeText(s: string): string {
  if (!s.includes("\\") && !s.includes("&")) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    if (ch === "\\" && isAsciiPunct(s[i + 1])) {
      out += s[i + 1];
      i++;
    } else if (ch === "&") {
      const e = entityAt(s, i);
      if (e === null) out += ch;
      else {
        out += e.text;
        i += e.len - 1;
      }
    } else out += ch;
  }
  return out;
}

function normalizeLabel(label: string): string {
  return label.trim().replace(/\s+/g, " ").toLowerCase();
}

// ---------------------------------------------------------------------------
// Block structure

interface Ref {
  href: string | null;
  title: string | null;
}

interface Ctx {
  refs: Map<string, Ref>;
  /** Inline content is parsed after all blocks, once every reference definition is known. */
  pending: { raw: string; set: (v: MdInline[]) => void }[];
}

function inlineLater(ctx: Ctx, raw: string, set: (v: MdInline[]) => void): void {
  ctx.pending.push({ raw, set });
}

interface Fence {
  ch: string;
  len: number;
  indent: number;
  lang: string | null;
}

function fenceOpen(line: string): Fence | null {
  const indent = leadingSpaces(line);
  if (indent > 3) return null;
  const ch = line[indent];
  if (ch !== "`" && ch !== "~") return null;
  let k = indent;
  while (line[k] === ch) k++;
  const len = k - indent;
  if (len < 3) return null;
  const info = line.slice(k).trim();
  if (ch === "`" && info.includes("`")) return null;
  const word = info.split(/[ \t]/, 1)[0] ?? "";
  return { ch, len, indent, lang: word ? unescapeText(word) : null };
}

function isFenceClose(line: string, f: Fence): boolean {
  const indent = leadingSpaces(line);
  if (indent > 3) return false;
  let k = indent;
  while (line[k] === f.ch) k++;
  return k - indent >= f.len && isBlank(line.slice(k));
}

function isThematicBreak(line: string): boolean {
  const indent = leadingSpaces(line);
  if (indent > 3) return false;
  const ch = line[indent];
  if (ch !== "*" && ch !== "-" && ch !== "_") return false;
  let count = 0;
  for (let i = indent; i < line.length; i++) {
    const c = line[i];
    if (c === ch) count++;
    else if (!isSpace(c)) return false;
  }
  return count >= 3;
}

function atxHeading(line: string): { level: 1 | 2 | 3 | 4 | 5 | 6; raw: string } | null {
  const indent = leadingSpaces(line);
  if (indent > 3 || line[indent] !== "#") return null;
  let k = indent;
  while (line[k] === "#") k++;
  const level = k - indent;
  if (level > 6 || (k < line.length && !isSpace(line[k]))) return null;
  let rest = line.slice(k).trim();
  // An optional closing run of #s, separated from the text by a space.
  let j = rest.length;
  while (j > 0 && rest[j - 1] === "#") j--;
  if (j === 0) rest = "";
  else if (j < rest.length && isSpace(rest[j - 1])) rest = rest.slice(0, j).trimEnd();
  return { level: level as 1 | 2 | 3 | 4 | 5 | 6, raw: rest };
}

interface Marker {
  ordered: boolean;
  /** The bullet character, or the ordered delimiter (`.` or `)`). */
  kind: string;
  start: number;
  /** Column where the item's content starts. */
  width: number;
  empty: boolean;
}

function listMarker(line: string): Marker | null {
  const indent = leadingSpaces(line);
  if (indent > 3) return null;
  let j = indent;
  const c = line[j];
  let ordered = false;
  let start = 1;
  let kind: string;
  if (c === "-" || c === "*" || c === "+") {
    kind = c;
    j++;
  } else {
    let k = j;
    while (k < line.length && k - j < 10 && line[k]! >= "0" && line[k]! <= "9") k++;
    const d = line[k];
    if (k === j || k - j > 9 || (d !== "." && d !== ")")) return null;
    ordered = true;
    start = Number(line.slice(j, k));
    kind = d;
    j = k + 1;
  }
  if (j < line.length && !isSpace(line[j])) return null;
  let k = j;
  while (k < line.length && isSpace(line[k])) k++;
  const empty = k >= line.length;
  const gap = k - j;
  const width = empty || gap > 4 ? j + 1 : k;
  return { ordered, kind, start, width, empty };
}

/** Can this line start a block that interrupts a paragraph? */
function interruptsParagraph(line: string): boolean {
  if (leadingSpaces(line) > 3) return false;
  if (isThematicBreak(line) || atxHeading(line) || fenceOpen(line)) return true;
  if (line.trimStart()[0] === ">") return true;
  const m = listMarker(line);
  return m !== null && !m.empty && (!m.ordered || m.start === 1);
}

/** Does this line start any block (so it cannot be a lazy continuation line)? */
function startsBlock(line: string): boolean {
  return interruptsParagraph(line) || listMarker(line) !== null;
}

/** Splits a table row into raw cell strings; `\|` becomes a literal pipe. */
function splitRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells: string[] = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === "\\" && s[i + 1] === "|") {
      cur += "|";
      i++;
    } else if (ch === "|") {
      cells.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  cells.push(cur.trim());
  return cells;
}

function delimiterRow(line: string): MdAlign[] | null {
  if (leadingSpaces(line) > 3 || !line.includes("-")) return null;
  for (let i = 0; i < line.length; i++) if (!" \t|:-".includes(line[i] as string)) return null;
  const align: MdAlign[] = [];
  for (const cell of splitRow(line)) {
    if (!/^:?-+:?$/.test(cell)) return null;
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    align.push(left && right ? "center" : right ? "right" : left ? "left" : null);
  }
  return align;
}

/** A table starts at lines[i] when lines[i+1] is a matching delimiter row. */
function tableAt(lines: string[], i: number): MdAlign[] | null {
  const head = lines[i];
  const delim = lines[i + 1];
  if (head === undefined || delim === undefined || leadingSpaces(head) > 3) return null;
  if (!head.includes("|") && !delim.includes("|")) return null;
  const align = delimiterRow(delim);
  if (!align || splitRow(head).length !== align.length) return null;
  return align;
}

/** `[label]: destination "title"` on one line; records it and reports whether it was one. */
function referenceDefinition(line: string, ctx: Ctx): boolean {
  const s = line.trim();
  if (s[0] !== "[") return false;
  let k = 1;
  while (k < s.length && k <= 1000 && s[k] !== "]") {
    if (s[k] === "[") return false;
    k += s[k] === "\\" ? 2 : 1;
  }
  if (s[k] !== "]" || s[k + 1] !== ":") return false;
  const label = normalizeLabel(s.slice(1, k));
  if (label === "") return false;
  k += 2;
  while (isSpace(s[k])) k++;
  let dest: string;
  if (s[k] === "<") {
    const close = s.indexOf(">", k);
    if (close < 0) return false;
    dest = s.slice(k + 1, close);
    if (dest.includes("<")) return false;
    k = close + 1;
  } else {
    const begin = k;
    while (k < s.length && !isSpace(s[k])) k++;
    dest = s.slice(begin, k);
    if (dest === "") return false;
  }
  const afterDest = k;
  while (isSpace(s[k])) k++;
  let title: string | null = null;
  if (k < s.length) {
    const open = s[k];
    const close = open === "(" ? ")" : open;
    if (k === afterDest || (open !== '"' && open !== "'" && open !== "(") || s[s.length - 1] !== close || s.length - 1 === k) return false;
    title = unescapeText(s.slice(k + 1, s.length - 1));
  }
  if (!ctx.refs.has(label)) ctx.refs.set(label, { href: safeHref(unescapeText(dest)), title });
  return true;
}

/** Tracks whether a run of lines has an unclosed code fence (no lazy lines inside fences). */
function nextFenceState(open: Fence | null, line: string): Fence | null {
  if (open) return isFenceClose(line, open) ? null : open;
  return fenceOpen(line);
}

interface Parsed {
  blocks: MdBlock[];
  /** A blank line separated two of these blocks (makes an enclosing list loose). */
  loose: boolean;
}

function parseBlocks(input: string[], depth: number, ctx: Ctx): Parsed {
  const blocks: MdBlock[] = [];
  if (depth >= MAX_DEPTH) {
    const text = input.join("\n").trim();
    if (text) blocks.push({ type: "paragraph", children: [{ type: "text", text }] });
    return { blocks, loose: false };
  }
  const lines = input.map(expandLeadingTabs);
  const n = lines.length;
  let loose = false;
  let blankBefore = false;
  let i = 0;
  while (i < n) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      if (blocks.length) blankBefore = true;
      i++;
      continue;
    }
    if (blankBefore) loose = true;
    blankBefore = false;
    const indent = leadingSpaces(line);

    // Indented code.
    if (indent >= 4) {
      const code: string[] = [];
      while (i < n && (isBlank(lines[i] as string) || leadingSpaces(lines[i] as string) >= 4)) {
        code.push((lines[i] as string).slice(4));
        i++;
      }
      while (code.length && isBlank(code[code.length - 1] as string)) code.pop();
      blocks.push({ type: "code", lang: null, text: code.join("\n") });
      continue;
    }

    // Fenced code.
    const fence = fenceOpen(line);
    if (fence) {
      const code: string[] = [];
      i++;
      while (i < n && !isFenceClose(lines[i] as string, fence)) {
        const l = lines[i] as string;
        code.push(l.slice(Math.min(fence.indent, leadingSpaces(l))));
        i++;
      }
      i++;
      blocks.push({ type: "code", lang: fence.lang, text: code.join("\n") });
      continue;
    }

    if (isThematicBreak(line)) {
      blocks.push({ type: "hr" });
      i++;
      continue;
    }

    const heading = atxHeading(line);
    if (heading) {
      const block: MdBlock = { type: "heading", level: heading.level, children: [] };
      inlineLater(ctx, heading.raw, (v) => (block.children = v));
      blocks.push(block);
      i++;
      continue;
    }

    // Blockquote: strip one `>` level (plus lazy paragraph continuation lines) and recurse.
    if (line[indent] === ">") {
      const inner: string[] = [];
      let fenceState: Fence | null = null;
      while (i < n) {
        const l = lines[i] as string;
        const li = leadingSpaces(l);
        let stripped: string;
        if (li <= 3 && l[li] === ">") {
          stripped = l.slice(li + 1);
          if (stripped[0] === " ") stripped = stripped.slice(1);
          else if (stripped[0] === "\t") stripped = "   " + stripped.slice(1);
        } else if (!isBlank(l) && !fenceState && inner.length && !isBlank(inner[inner.length - 1] as string) && !startsBlock(l)) {
          stripped = l;
        } else break;
        inner.push(stripped);
        fenceState = nextFenceState(fenceState, stripped);
        i++;
      }
      blocks.push({ type: "blockquote", children: parseBlocks(inner, depth + 1, ctx).blocks });
      continue;
    }

    // Lists: each item's lines are de-indented by the item's content column and parsed recursively.
    const marker = listMarker(line);
    if (marker) {
      const list: Extract<MdBlock, { type: "list" }> = {
        type: "list",
        ordered: marker.ordered,
        start: marker.ordered ? marker.start : null,
        tight: true,
        items: [],
      };
      let m: Marker | null = marker;
      let listLoose = false;
      while (m) {
        const first = lines[i] as string;
        const itemLines = [m.empty ? "" : first.slice(m.width)];
        let j = i + 1;
        let blanks = 0;
        let fenceState = nextFenceState(null, itemLines[0] as string);
        while (j < n) {
          const l = lines[j] as string;
          if (isBlank(l)) {
            if (m.empty && itemLines.length === 1) break; // an item starts with at most one blank line
            blanks++;
            j++;
            continue;
          }
          let content: string;
          if (leadingSpaces(l) >= m.width) content = l.slice(m.width);
          else if (blanks === 0 && !fenceState && !isBlank(itemLines[itemLines.length - 1] as string) && !startsBlock(l))
            content = l.trimStart();
          else break;
          for (; blanks > 0; blanks--) itemLines.push("");
          itemLines.push(content);
          fenceState = nextFenceState(fenceState, content);
          j++;
        }
        let checked: boolean | null = null;
        const task = /^\[([ xX])\][ \t]+(?=\S)/.exec(itemLines[0] as string);
        if (task) {
          checked = task[1] !== " ";
          itemLines[0] = (itemLines[0] as string).slice(task[0].length);
        }
        const parsed = parseBlocks(itemLines, depth + 1, ctx);
        if (parsed.loose) listLoose = true;
        list.items.push({ checked, children: parsed.blocks });
        i = j;
        const next = lines[i];
        const nm = next !== undefined && !isThematicBreak(next) ? listMarker(next) : null;
        if (nm && nm.ordered === marker.ordered && nm.kind === marker.kind) {
          if (blanks > 0) listLoose = true;
          m = nm;
        } else {
          if (blanks > 0) blankBefore = true;
          m = null;
        }
      }
      list.tight = !listLoose;
      blocks.push(list);
      continue;
    }

    // Tables.
    const align = tableAt(lines, i);
    if (align) {
      const cols = align.length;
      const cells = (raw: string[]): MdInline[][] => {
        const out: MdInline[][] = [];
        for (let c = 0; c < cols; c++) {
          out.push([]);
          inlineLater(ctx, raw[c] ?? "", (v) => (out[c] = v));
        }
        return out;
      };
      const table: MdBlock = { type: "table", align, head: cells(splitRow(line)), rows: [] };
      i += 2;
      while (i < n && !isBlank(lines[i] as string) && !interruptsParagraph(lines[i] as string)) {
        table.rows.push(cells(splitRow(lines[i] as string)));
        i++;
      }
      blocks.push(table);
      continue;
    }

    // Paragraph (or setext heading), after any leading reference definitions.
    const para: string[] = [line.slice(indent)];
    let level: 1 | 2 | 0 = 0;
    i++;
    while (i < n) {
      const l = lines[i] as string;
      if (isBlank(l)) break;
      if (leadingSpaces(l) <= 3) {
        const t = l.trim();
        if (/^=+$/.test(t) || /^-+$/.test(t)) {
          level = t[0] === "=" ? 1 : 2;
          i++;
          break;
        }
      }
      if (interruptsParagraph(l) || tableAt(lines, i)) break;
      para.push(l.trimStart());
      i++;
    }
    let defs = 0;
    while (defs < para.length && referenceDefinition(para[defs] as string, ctx)) defs++;
    if (defs === para.length) {
      if (level === 2) blocks.push({ type: "hr" });
      continue;
    }
    const raw = (defs ? para.slice(defs) : para).join("\n").trimEnd();
    const block: MdBlock = level ? { type: "heading", level, children: [] } : { type: "paragraph", children: [] };
    inlineLater(ctx, raw, (v) => (block.children = v));
    blocks.push(block);
  }
  return { blocks, loose };
}

// ---------------------------------------------------------------------------
// Inline content

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
function parseInline(s: string, refs: Map<string, Ref>): MdInline[] {
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

// ---------------------------------------------------------------------------

/** Parses markdown text into blocks. Never throws on any input; empty input gives []. */
export function parseMarkdown(text: string): MdBlock[] {
  if (!text) return [];
  const src = text.replace(/\r\n?/g, "\n").replace(/\u0000/g, "\uFFFD");
  const ctx: Ctx = { refs: new Map(), pending: [] };
  const { blocks } = parseBlocks(src.split("\n"), 0, ctx);
  for (const p of ctx.pending) p.set(parseInline(p.raw, ctx.refs));
  return blocks;
}
