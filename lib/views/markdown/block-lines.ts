// What a line starts, for the block pass (blocks.ts): code fences, thematic
// breaks, ATX headings, list markers, tables (a header row and its delimiter
// row) and link reference definitions; and which of those interrupt a
// paragraph.
import { isBlank, isSpace, leadingSpaces, normalizeLabel, unescapeText, type Ref } from "./text";
import { safeHref, type MdAlign } from "./tree";

export interface Fence {
  ch: string;
  len: number;
  indent: number;
  lang: string | null;
}

export function fenceOpen(line: string): Fence | null {
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

export function isFenceClose(line: string, f: Fence): boolean {
  const indent = leadingSpaces(line);
  if (indent > 3) return false;
  let k = indent;
  while (line[k] === f.ch) k++;
  return k - indent >= f.len && isBlank(line.slice(k));
}

export function isThematicBreak(line: string): boolean {
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

export function atxHeading(line: string): { level: 1 | 2 | 3 | 4 | 5 | 6; raw: string } | null {
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

export interface Marker {
  ordered: boolean;
  /** The bullet character, or the ordered delimiter (`.` or `)`). */
  kind: string;
  start: number;
  /** Column where the item's content starts. */
  width: number;
  empty: boolean;
}

export function listMarker(line: string): Marker | null {
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
export function interruptsParagraph(line: string): boolean {
  if (leadingSpaces(line) > 3) return false;
  if (isThematicBreak(line) || atxHeading(line) || fenceOpen(line)) return true;
  if (line.trimStart()[0] === ">") return true;
  const m = listMarker(line);
  return m !== null && !m.empty && (!m.ordered || m.start === 1);
}

/** Does this line start any block (so it cannot be a lazy continuation line)? */
export function startsBlock(line: string): boolean {
  return interruptsParagraph(line) || listMarker(line) !== null;
}

/** Splits a table row into raw cell strings; `\|` becomes a literal pipe. */
export function splitRow(line: string): string[] {
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

export function delimiterRow(line: string): MdAlign[] | null {
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
export function tableAt(lines: string[], i: number): MdAlign[] | null {
  const head = lines[i];
  const delim = lines[i + 1];
  if (head === undefined || delim === undefined || leadingSpaces(head) > 3) return null;
  if (!head.includes("|") && !delim.includes("|")) return null;
  const align = delimiterRow(delim);
  if (!align || splitRow(head).length !== align.length) return null;
  return align;
}

/** `[label]: destination "title"` on one line; records it and reports whether it was one. */
export function referenceDefinition(line: string, refs: Map<string, Ref>): boolean {
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
  if (!refs.has(label)) refs.set(label, { href: safeHref(unescapeText(dest)), title });
  return true;
}

/** Tracks whether a run of lines has an unclosed code fence (no lazy lines inside fences). */
export function nextFenceState(open: Fence | null, line: string): Fence | null {
  if (open) return isFenceClose(line, open) ? null : open;
  return fenceOpen(line);
}
