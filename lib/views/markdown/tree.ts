// The markdown tree parseMarkdown returns (what features/session/Markdown.tsx
// renders), its bounds, and the only way a link target becomes an href.
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
