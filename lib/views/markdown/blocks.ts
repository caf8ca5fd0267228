// The block pass: lines into headings, paragraphs, code, quotes, lists and
// tables (what each line starts is recognised in block-lines.ts); inline
// content is queued and parsed once every reference is known.
import {
  atxHeading,
  fenceOpen,
  interruptsParagraph,
  isFenceClose,
  isThematicBreak,
  listMarker,
  nextFenceState,
  referenceDefinition,
  splitRow,
  startsBlock,
  tableAt,
  type Fence,
  type Marker,
} from "./block-lines";
import { expandLeadingTabs, isBlank, leadingSpaces, type Ref } from "./text";
import { MAX_DEPTH, type MdBlock, type MdInline } from "./tree";

export interface Ctx {
  refs: Map<string, Ref>;
  /** Inline content is parsed after all blocks, once every reference definition is known. */
  pending: { raw: string; set: (v: MdInline[]) => void }[];
}

function inlineLater(ctx: Ctx, raw: string, set: (v: MdInline[]) => void): void {
  ctx.pending.push({ raw, set });
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
    while (defs < para.length && referenceDefinition(para[defs] as string, ctx.refs)) defs++;
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
