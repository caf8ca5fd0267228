import { expect } from "vitest";
import { parseMarkdown, type MdBlock, type MdInline } from "@/lib/views/markdown";

// A compact, HTML-like rendering of the tree, so expectations stay readable.
// (Test-only: the app renders the tree with React in features/session/Markdown.tsx.)
export const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
export function inl(nodes: MdInline[]): string {
  return nodes
    .map((n) => {
      switch (n.type) {
        case "text":
          return esc(n.text);
        case "code":
          return `<code>${esc(n.text)}</code>`;
        case "break":
          return "<br>";
        case "image":
          return `<img src=${n.src ?? "NULL"} alt=${JSON.stringify(n.alt)}${n.title ? ` title=${JSON.stringify(n.title)}` : ""}>`;
        case "link":
          return `<a href=${n.href}${n.title ? ` title=${JSON.stringify(n.title)}` : ""}>${inl(n.children)}</a>`;
        default:
          return `<${n.type}>${inl(n.children)}</${n.type}>`;
      }
    })
    .join("");
}
export function ser(blocks: MdBlock[], tight = false): string {
  return blocks
    .map((b) => {
      switch (b.type) {
        case "heading":
          return `<h${b.level}>${inl(b.children)}</h${b.level}>`;
        case "paragraph":
          return tight ? inl(b.children) : `<p>${inl(b.children)}</p>`;
        case "code":
          return `<pre${b.lang ? ` lang=${b.lang}` : ""}>${esc(b.text)}</pre>`;
        case "hr":
          return "<hr>";
        case "blockquote":
          return `<blockquote>${ser(b.children)}</blockquote>`;
        case "list": {
          const tag = b.ordered ? "ol" : "ul";
          const items = b.items.map(
            (it) => `<li>${it.checked === null ? "" : it.checked ? "[x] " : "[ ] "}${ser(it.children, b.tight)}</li>`,
          );
          return `<${tag}${b.start !== null && b.start !== 1 ? ` start=${b.start}` : ""}>${items.join("")}</${tag}>`;
        }
        case "table": {
          const cell = (tag: string, c: MdInline[], i: number) => `<${tag}${b.align[i] ? ` ${b.align[i]}` : ""}>${inl(c)}</${tag}>`;
          const head = `<tr>${b.head.map((c, i) => cell("th", c, i)).join("")}</tr>`;
          return `<table>${head}${b.rows.map((r) => `<tr>${r.map((c, i) => cell("td", c, i)).join("")}</tr>`).join("")}</table>`;
        }
      }
    })
    .join("\n");
}
export const md = (src: string) => ser(parseMarkdown(src));
/** Inline content of a one-paragraph document. */
export const one = (src: string) => {
  const blocks = parseMarkdown(src);
  expect(blocks).toHaveLength(1);
  const [p] = blocks;
  if (p?.type !== "paragraph") throw new Error(`expected a paragraph, got ${p?.type}`);
  return inl(p.children);
};
/** Every node of the tree, for "no such node anywhere" checks. */
export function walk(blocks: MdBlock[]): (MdBlock | MdInline)[] {
  const out: (MdBlock | MdInline)[] = [];
  const inline = (ns: MdInline[]) => {
    for (const n of ns) {
      out.push(n);
      if ("children" in n) inline(n.children);
    }
  };
  const block = (bs: MdBlock[]) => {
    for (const b of bs) {
      out.push(b);
      if (b.type === "heading" || b.type === "paragraph") inline(b.children);
      else if (b.type === "blockquote") block(b.children);
      else if (b.type === "list") for (const it of b.items) block(it.children);
      else if (b.type === "table") for (const c of [...b.head, ...b.rows.flat()]) inline(c);
    }
  };
  block(blocks);
  return out;
}
export const depthOf = (b: MdBlock): number =>
  b.type === "blockquote"
    ? 1 + Math.max(0, ...b.children.map(depthOf))
    : b.type === "list"
      ? 1 + Math.max(0, ...b.items.flatMap((i) => i.children.map(depthOf)))
      : 0;
