// The block pass: lines into headings, paragraphs, code, quotes, lists and
// tables; inline content is queued and parsed once every reference is known.
// ---------------------------------------------------------------------------
// Block structure
import { expandLeadingTabs, isBlank, isSpace, leadingSpaces, normalizeLabel, unescapeText, type Ref } from "./text";
import { MAX_DEPTH, safeHref, type MdAlign, type MdBlock, type MdInline } from "./tree";

export interface Ctx {
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

export function parseBlocks(input: string[], depth: number, ctx: Ctx): Parsed {
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
