// Characters, entities and escapes: the small text helpers both passes use.
// ---------------------------------------------------------------------------
// Shared character helpers

const ASCII_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

export function isAsciiPunct(ch: string | undefined): boolean {
  return ch !== undefined && ch.length === 1 && ASCII_PUNCT.includes(ch);
}

export function isSpace(ch: string | undefined): boolean {
  return ch === " " || ch === "\t";
}

export function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) if (!isSpace(line[i])) return false;
  return true;
}

export function leadingSpaces(line: string): number {
  let n = 0;
  while (n < line.length && line.charCodeAt(n) === 32) n++;
  return n;
}

/** Expands tabs in a line's leading whitespace to spaces (tab stops of 4). */
export function expandLeadingTabs(line: string): string {
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
export function entityAt(s: string, i: number): { text: string; len: number } | null {
  for (let k = i + 1; k < s.length && k - i <= 6; k++) {
    if (s[k] !== ";") continue;
    const text = ENTITIES[s.slice(i, k + 1)];
    return text === undefined ? null : { text, len: k + 1 - i };
  }
  return null;
}

/** Backslash escapes and the few known entities, for link targets and titles. */
export function unescapeText(s: string): string {
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

export function normalizeLabel(label: string): string {
  return label.trim().replace(/\s+/g, " ").toLowerCase();
}

export interface Ref {
  href: string | null;
  title: string | null;
}
