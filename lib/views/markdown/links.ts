// Link syntax the inline pass (inline.ts) recognises: an inline link's
// `(destination "title")` tail, `<scheme:…>` and `<user@host>` autolinks, and
// GFM bare autolinks (`https://…`, `http://…`, `www.…`). Each scan is bounded.
import { isAsciiPunct, unescapeText } from "./text";
import { safeHref } from "./tree";

const UNICODE_SPACE = /\s/u;

export interface LinkTail {
  dest: string;
  title: string | null;
  end: number;
}

/** Parses `(destination "title")` starting at the `(`. */
export function inlineLinkTail(s: string, open: number): LinkTail | null {
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
export function angleAutolink(s: string, i: number): { href: string; text: string; end: number } | null {
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
export function bareAutolink(s: string, i: number): { href: string; text: string; end: number } | null {
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
