// What of a JSON value agents sent can be shown, within fixed bounds. Agents
// control these documents: one nested 3,000 levels deep is only 6 KB, and
// rendering it as nested elements overflows the browser's stack (and
// multiplies the server-rendered HTML). So the views never walk a payload
// themselves: they render this outline, built here without recursion:
//
// - breadth first, so the top of a large document is what shows;
// - at most `maxNodes` values in all and `maxEntries` per object or array,
//   the rest counted ("… 1,200 more");
// - nothing nested deeper than `maxDepth` is expanded ("nested too deep to
//   show"), and strings longer than `maxStringChars` are clipped.
// Pure; the same limits apply on the server and in the browser.

export interface JsonLimits {
  /** Values shown in all (objects and arrays count as one each). */
  maxNodes: number;
  /** Entries shown per object or array. */
  maxEntries: number;
  /** Deepest level expanded; the root is level 0. */
  maxDepth: number;
  /** Characters shown of one string (or object key). */
  maxStringChars: number;
}

/** The live view: generous, still bounded. */
export const LIVE_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxNodes: 5_000,
  maxEntries: 500,
  maxDepth: 40,
  maxStringChars: 4_000,
});
/** The server-rendered first view: a glance (the live view follows within a second). */
export const FIRST_VIEW_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxNodes: 300,
  maxEntries: 50,
  maxDepth: 12,
  maxStringChars: 500,
});

export type JsonLeafType = "string" | "number" | "boolean" | "null" | "other";

export interface JsonLeaf {
  kind: "leaf";
  /** Object key (clipped), or undefined for array items and the root. */
  name?: string;
  type: JsonLeafType;
  /** JSON text of the value (strings quoted and escaped, possibly clipped). */
  text: string;
  /** Characters of the string not shown. */
  clipped: number;
}

export interface JsonBranch {
  kind: "branch";
  name?: string;
  array: boolean;
  /** Entries in the value. */
  size: number;
  /** Entries shown (leaves and branches), in order. */
  children: JsonOutlineNode[];
  /** Entries not shown (over maxEntries or the node budget). */
  omitted: number;
  /** Nested deeper than maxDepth: not expanded at all. */
  tooDeep: boolean;
}

export type JsonOutlineNode = JsonLeaf | JsonBranch;

export interface JsonOutline {
  root: JsonOutlineNode;
  /** Values shown. */
  shown: number;
  /** Something was left out: entries, depth or string characters. */
  truncated: boolean;
  /** Some branch was nested too deep to show. */
  tooDeep: boolean;
}

function clip(s: string, max: number): { text: string; clipped: number } {
  // Clip on a code point boundary.
  if (s.length <= max) return { text: s, clipped: 0 };
  let end = max;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: s.slice(0, end), clipped: s.length - end };
}

function leafOf(value: unknown, name: string | undefined, limits: JsonLimits): JsonLeaf {
  const base = name !== undefined ? { name } : {};
  if (value === null) return { kind: "leaf", ...base, type: "null", text: "null", clipped: 0 };
  switch (typeof value) {
    case "string": {
      const c = clip(value, limits.maxStringChars);
      return { kind: "leaf", ...base, type: "string", text: JSON.stringify(c.text), clipped: c.clipped };
    }
    case "number":
      return { kind: "leaf", ...base, type: "number", text: Number.isFinite(value) ? String(value) : "null", clipped: 0 };
    case "boolean":
      return { kind: "leaf", ...base, type: "boolean", text: String(value), clipped: 0 };
    case "bigint":
      return { kind: "leaf", ...base, type: "number", text: value.toString(), clipped: 0 };
    default:
      return { kind: "leaf", ...base, type: "other", text: String(value), clipped: 0 };
  }
}

function isBranch(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

function sizeOf(value: object): number {
  return Array.isArray(value) ? value.length : Object.keys(value).length;
}

/** The bounded outline of `value` (any JSON.parse result, or a protobuf-es toJson object). */
export function outlineJson(value: unknown, limits: JsonLimits): JsonOutline {
  let shown = 1;
  let truncated = false;
  let tooDeep = false;
  const make = (v: unknown, name: string | undefined, depth: number): { node: JsonOutlineNode; expand: boolean } => {
    const key = name === undefined ? undefined : clip(name, limits.maxStringChars);
    if (key && key.clipped > 0) truncated = true;
    const keyText = key === undefined ? undefined : key.clipped > 0 ? `${key.text}…` : key.text;
    if (!isBranch(v)) {
      const leaf = leafOf(v, keyText, limits);
      if (leaf.clipped > 0) truncated = true;
      return { node: leaf, expand: false };
    }
    const size = sizeOf(v);
    const deep = depth >= limits.maxDepth && size > 0;
    if (deep) {
      tooDeep = true;
      truncated = true;
    }
    const branch: JsonBranch = {
      kind: "branch",
      ...(keyText !== undefined ? { name: keyText } : {}),
      array: Array.isArray(v),
      size,
      children: [],
      omitted: deep ? size : 0,
      tooDeep: deep,
    };
    return { node: branch, expand: !deep && size > 0 };
  };

  const first = make(value, undefined, 0);
  // Breadth first: each queued branch is expanded in order, its entries
  // become nodes while the budget lasts, and its sub-branches wait in line.
  const queue: { branch: JsonBranch; value: object; depth: number }[] = [];
  if (first.expand) queue.push({ branch: first.node as JsonBranch, value: value as object, depth: 0 });
  for (let head = 0; head < queue.length; head++) {
    const { branch, value: v, depth } = queue[head] as { branch: JsonBranch; value: object; depth: number };
    queue[head] = undefined as unknown as (typeof queue)[number]; // let it go
    const entries: [string | undefined, unknown][] = [];
    const room = Math.min(limits.maxEntries, Math.max(0, limits.maxNodes - shown));
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && entries.length < room; i++) entries.push([undefined, v[i]]);
    } else {
      for (const k in v) {
        if (entries.length >= room) break;
        if (Object.prototype.hasOwnProperty.call(v, k)) entries.push([k, (v as Record<string, unknown>)[k]]);
      }
    }
    branch.omitted = branch.size - entries.length;
    if (branch.omitted > 0) truncated = true;
    for (const [name, child] of entries) {
      const made = make(child, name, depth + 1);
      branch.children.push(made.node);
      shown++;
      if (made.expand) queue.push({ branch: made.node as JsonBranch, value: child as object, depth: depth + 1 });
    }
  }
  return { root: first.node, shown, truncated, tooDeep };
}

/**
 * Pretty-printed JSON text of `value`, two spaces per level, bounded: levels
 * beyond `maxDepth` print as `…`, and the text stops near `maxChars` with a
 * final line saying so. Iterative, so a deep document cannot overflow the
 * stack (JSON.stringify would), and the indentation cannot grow the text
 * quadratically.
 */
export function boundedPrettyJson(value: unknown, limits: { maxChars: number; maxDepth: number }): { text: string; truncated: boolean } {
  const out: string[] = [];
  let length = 0;
  /** The character budget ran out: stop writing. */
  let cut = false;
  /** Something was left out (cut, or levels too deep). */
  let truncated = false;
  const push = (s: string): boolean => {
    if (cut) return false;
    if (length + s.length > limits.maxChars) {
      const room = Math.max(0, limits.maxChars - length);
      out.push(s.slice(0, room));
      length += room;
      cut = true;
      truncated = true;
      return false;
    }
    out.push(s);
    length += s.length;
    return true;
  };
  const indent = (depth: number) => "  ".repeat(Math.min(depth, limits.maxDepth));
  const scalar = (v: unknown): string => {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
    if (v === undefined || typeof v === "function" || typeof v === "symbol") return "null";
    return JSON.stringify(v) ?? "null";
  };
  // A stack of open containers and where each is in its entries.
  type Frame = { keys: string[] | null; items: unknown[] | Record<string, unknown>; i: number; depth: number };
  const open = (v: object, depth: number): Frame | null => {
    const array = Array.isArray(v);
    const keys = array ? null : Object.keys(v);
    const n = array ? v.length : (keys as string[]).length;
    if (n === 0) {
      push(array ? "[]" : "{}");
      return null;
    }
    if (depth >= limits.maxDepth) {
      truncated = true;
      push(array ? `[… ${n} item${n === 1 ? "" : "s"} nested too deep]` : `{… ${n} key${n === 1 ? "" : "s"} nested too deep}`);
      return null;
    }
    push(array ? "[" : "{");
    return { keys, items: v as unknown[] | Record<string, unknown>, i: 0, depth };
  };
  const stack: Frame[] = [];
  const writeValue = (v: unknown, depth: number): void => {
    if (typeof v === "object" && v !== null) {
      const f = open(v, depth);
      if (f) stack.push(f);
    } else push(scalar(v));
  };
  writeValue(value, 0);
  while (stack.length > 0 && !cut) {
    const f = stack[stack.length - 1] as Frame;
    const n = f.keys ? f.keys.length : (f.items as unknown[]).length;
    if (f.i >= n) {
      stack.pop();
      push(`\n${indent(f.depth)}${f.keys ? "}" : "]"}`);
      continue;
    }
    const sep = f.i === 0 ? "\n" : ",\n";
    let child: unknown;
    if (f.keys) {
      const k = f.keys[f.i] as string;
      child = (f.items as Record<string, unknown>)[k];
      if (!push(`${sep}${indent(f.depth + 1)}${JSON.stringify(k)}: `)) break;
    } else {
      child = (f.items as unknown[])[f.i];
      if (!push(`${sep}${indent(f.depth + 1)}`)) break;
    }
    f.i++;
    writeValue(child, f.depth + 1);
  }
  let text = out.join("");
  if (truncated) text += "\n… (shortened: download the raw payload for all of it)";
  return { text, truncated };
}
