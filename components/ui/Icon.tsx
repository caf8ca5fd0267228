"use client";
// Small stroke icons drawn for Baton (16×16 grid, currentColor). Always
// decorative: the text next to an icon carries the meaning. A client
// component although it has no state: the header loads its code on every
// page anyway, and a server-drawn first view (the list's, the inbox's, the
// session page's) then sends each icon as a reference with its name instead
// of its SVG in the page's RSC payload (98 icons on the list's first view:
// about 30 K characters of HTML and the server's work to write them).

import type { IconName } from "@/lib/views/labels";

export type UiIconName =
  | IconName
  | "sun"
  | "moon"
  | "monitor"
  | "globe"
  | "download"
  | "link"
  | "chevron-down"
  | "chevron-right"
  | "arrow-down"
  | "arrow-up"
  | "search"
  | "refresh"
  | "code"
  | "image"
  | "user"
  | "users"
  | "bot"
  | "server"
  | "plus";

const PATHS: Record<UiIconName, React.ReactNode> = {
  "circle-dashed": <circle cx="8" cy="8" r="5.5" strokeDasharray="2.4 2.2" />,
  send: <path d="M2.5 8h9M8 4.5 11.5 8 8 11.5" />,
  document: (
    <>
      <path d="M4 1.8h5.2L12 4.6v9.6H4z" />
      <path d="M6 7.5h4M6 10h4" />
    </>
  ),
  check: <path d="m3 8.4 3.1 3.1L13 4.6" />,
  x: <path d="m4.2 4.2 7.6 7.6M11.8 4.2l-7.6 7.6" />,
  seal: (
    <>
      <path d="M8 1.6 14.4 8 8 14.4 1.6 8z" />
      <path d="m5.6 8.1 1.7 1.7 3.2-3.3" />
    </>
  ),
  inbox: <path d="M1.8 9.2h3.4l1 1.8h3.6l1-1.8h3.4M1.8 9.2 3.8 3h8.4l2 6.2v4H1.8z" />,
  play: <path d="M5 3.2v9.6L12.6 8z" />,
  "check-circle": (
    <>
      <circle cx="8" cy="8" r="6" />
      <path d="m5.4 8.2 1.9 1.9 3.4-3.6" />
    </>
  ),
  alert: (
    <>
      <path d="M8 1.9 14.6 13.6H1.4z" />
      <path d="M8 6.2v3.4M8 11.4v.2" />
    </>
  ),
  dot: <circle cx="8" cy="8" r="3" fill="currentColor" />,
  clock: (
    <>
      <circle cx="8" cy="8" r="6" />
      <path d="M8 4.6V8l2.4 1.6" />
    </>
  ),
  pause: <path d="M5.6 3.5v9M10.4 3.5v9" />,
  ban: (
    <>
      <circle cx="8" cy="8" r="6" />
      <path d="m3.8 12.2 8.4-8.4" />
    </>
  ),
  question: (
    <>
      <circle cx="8" cy="8" r="6" />
      <path d="M6.2 6.3a1.9 1.9 0 1 1 2.6 1.8c-.5.2-.8.6-.8 1.1v.4M8 11.4v.2" />
    </>
  ),
  sun: (
    <>
      <circle cx="8" cy="8" r="2.8" />
      <path d="M8 1.2v1.6M8 13.2v1.6M1.2 8h1.6M13.2 8h1.6M3.2 3.2l1.1 1.1M11.7 11.7l1.1 1.1M3.2 12.8l1.1-1.1M11.7 4.3l1.1-1.1" />
    </>
  ),
  moon: <path d="M13.2 9.6A5.6 5.6 0 0 1 6.4 2.8a5.6 5.6 0 1 0 6.8 6.8z" />,
  monitor: (
    <>
      <path d="M1.8 2.6h12.4v8.2H1.8z" />
      <path d="M5.6 13.6h4.8M8 10.8v2.8" />
    </>
  ),
  globe: (
    <>
      <circle cx="8" cy="8" r="6" />
      <path d="M2 8h12M8 2c1.7 1.8 2.5 3.8 2.5 6S9.7 12.2 8 14c-1.7-1.8-2.5-3.8-2.5-6S6.3 3.8 8 2z" />
    </>
  ),
  download: <path d="M8 2v8M4.8 7 8 10.2 11.2 7M2.5 13.5h11" />,
  link: (
    <>
      <path d="M6.8 9.2a2.6 2.6 0 0 0 3.7 0l2.4-2.4a2.6 2.6 0 0 0-3.7-3.7l-.9.9" />
      <path d="M9.2 6.8a2.6 2.6 0 0 0-3.7 0L3.1 9.2a2.6 2.6 0 0 0 3.7 3.7l.9-.9" />
    </>
  ),
  "chevron-down": <path d="m4 6 4 4 4-4" />,
  "chevron-right": <path d="m6 4 4 4-4 4" />,
  "arrow-down": <path d="M8 2.5v11M3.8 9.3 8 13.5l4.2-4.2" />,
  "arrow-up": <path d="M8 13.5v-11M3.8 6.7 8 2.5l4.2 4.2" />,
  search: (
    <>
      <circle cx="7" cy="7" r="4.5" />
      <path d="m10.4 10.4 3.6 3.6" />
    </>
  ),
  refresh: <path d="M13 3.5v3.2H9.8M13 6.7A5.2 5.2 0 1 0 13.4 10" />,
  code: <path d="M5.5 4.5 2 8l3.5 3.5M10.5 4.5 14 8l-3.5 3.5" />,
  image: (
    <>
      <path d="M2 3h12v10H2z" />
      <circle cx="5.6" cy="6.4" r="1.2" />
      <path d="m2.4 12.4 4-4 3 3 1.8-1.8 2.6 2.6" />
    </>
  ),
  user: (
    <>
      <circle cx="8" cy="5.4" r="2.6" />
      <path d="M2.8 14c.6-2.7 2.7-4.3 5.2-4.3s4.6 1.6 5.2 4.3" />
    </>
  ),
  plus: <path d="M8 3v10M3 8h10" />,
  bot: (
    <>
      <rect x="2.6" y="5" width="10.8" height="8" rx="2" />
      <path d="M8 5V2.6M5.8 8.6v.4M10.2 8.6v.4M6 11h4" />
      <circle cx="8" cy="2.2" r=".6" fill="currentColor" />
    </>
  ),
  server: (
    <>
      <rect x="2.2" y="2.5" width="11.6" height="4.5" rx="1" />
      <rect x="2.2" y="9" width="11.6" height="4.5" rx="1" />
      <path d="M4.6 4.75h.2M4.6 11.25h.2" />
    </>
  ),
  users: (
    <>
      <circle cx="6" cy="5.6" r="2.3" />
      <path d="M1.6 13.6c.5-2.4 2.3-3.8 4.4-3.8s3.9 1.4 4.4 3.8M10.6 3.5a2.3 2.3 0 0 1 0 4.4M12 9.9c1.3.5 2.2 1.8 2.5 3.7" />
    </>
  ),
};

export function Icon({ name, className }: { name: UiIconName; className?: string }) {
  return (
    <svg
      viewBox="0 0 16 16"
      width="16"
      height="16"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.6"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      className={className ?? "h-4 w-4 shrink-0"}
    >
      {PATHS[name]}
    </svg>
  );
}
