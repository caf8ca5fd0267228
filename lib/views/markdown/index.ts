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
//
// The passes: blocks.ts (lines into blocks), inline.ts (text into inline
// nodes), text.ts (characters and entities), tree.ts (the tree, its bounds
// and safeHref).
import { parseBlocks, type Ctx } from "./blocks";
import { parseInline } from "./inline";
import type { MdBlock } from "./tree";

export { MAX_DEPTH, MAX_INLINE_DEPTH, safeHref, type MdAlign, type MdBlock, type MdInline, type MdListItem } from "./tree";

/** Parses markdown text into blocks. Never throws on any input; empty input gives []. */
export function parseMarkdown(text: string): MdBlock[] {
  if (!text) return [];
  const src = text.replace(/\r\n?/g, "\n").replace(/\u0000/g, "\uFFFD");
  const ctx: Ctx = { refs: new Map(), pending: [] };
  const { blocks } = parseBlocks(src.split("\n"), 0, ctx);
  for (const p of ctx.pending) p.set(parseInline(p.raw, ctx.refs));
  return blocks;
}
