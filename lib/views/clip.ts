// Display bounds for short texts agents write (intents, scopes, reasons,
// summaries, field values). The runtime accepts payloads up to 1 MB, so one
// of these can be a megabyte; drawn as is in a list row, a header or the
// server-rendered first view it would swamp the page. Views show the start
// and say how much is left out; the raw envelope and the audit export keep
// the whole text. Pure.

import { formatCount } from "@/lib/views/format";

/** One-line places: list rows, headers, titles, inbox items. */
export const MAX_LINE_CHARS = 500;
/** Paragraph places: reasons, instructions, event fields. */
export const MAX_PARAGRAPH_CHARS = 4_000;

/** `text`, or its first `max` characters (never half a surrogate pair) and a note of how many more there are. */
export function clipForDisplay(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  const more = text.length - end;
  return `${text.slice(0, end)}… (${formatCount(more)} more characters)`;
}

export const clipLine = (text: string): string => clipForDisplay(text, MAX_LINE_CHARS);
export const clipParagraph = (text: string): string => clipForDisplay(text, MAX_PARAGRAPH_CHARS);
