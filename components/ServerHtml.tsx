"use client";
// Server-rendered markup that hydration leaves alone. On the server (and on
// a page React renders in the browser, after a client-side navigation) it is
// its children in a <div>. When React hydrates the server's HTML, the <div>
// is claimed with an empty `dangerouslySetInnerHTML`: React does not walk
// into it, so the markup the server sent stays as it is, and none of its
// components is rendered or hydrated in the browser. React never writes an
// unchanged `dangerouslySetInnerHTML`, so later renders keep it too.
//
// For what is shown only until something replaces it (the session page's
// first view, LiveSession.tsx): its links are plain links and its buttons
// do nothing until then.

import { useState, type ReactNode } from "react";

const ATTRIBUTE = "data-server-html";
const EMPTY = { __html: "" };

export function ServerHtml({
  id,
  className,
  data,
  children,
}: {
  id: string;
  className?: string;
  /** More data-* attributes of the <div> (e.g. for scripts that read the page before React has run). */
  data?: Record<`data-${string}`, string>;
  children: ReactNode;
}) {
  // Whether the server's markup for `id` is in the document when this first renders: only while
  // React hydrates it (a client render mounts the <div> later, in its commit).
  const [kept] = useState(() => typeof document !== "undefined" && document.querySelector(`[${ATTRIBUTE}="${CSS.escape(id)}"]`) !== null);
  const attrs = { ...data, [ATTRIBUTE]: id, className };
  if (kept) return <div {...attrs} dangerouslySetInnerHTML={EMPTY} suppressHydrationWarning />;
  return <div {...attrs}>{children}</div>;
}
