"use client";
// /inbox in two steps, as the session list (LiveSessionList.tsx): the
// server-drawn first view (`preview`, InboxPreview.tsx) is what the browser
// paints, with no inbox JavaScript of its own before `load`; right after
// `load` the live inbox's screen (InboxScreen: the live count, an outage's
// words, the news; its live code follows) is fetched and takes over (not
// while a press is in progress: lib/client/swap-after-press.ts). Without a
// first view (signed out, the console unavailable) it loads at once.

import type { ReactNode } from "react";
import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { useSwapWhenUnpressed } from "@/lib/client/swap-after-press";
import type { InboxFirstView } from "@/lib/views/inbox-first-view";

const loadScreen = componentLoader<{ first?: InboxFirstView | undefined }>(() =>
  import("@/features/inbox/InboxScreen").then((m) => m.InboxScreen),
);

export function LiveInbox({ first, preview }: { first: InboxFirstView | undefined; preview: ReactNode }) {
  const loaded = useAfterLoadComponent(loadScreen, "the inbox", first === undefined ? "now" : "after-load");
  const Screen = useSwapWhenUnpressed(loaded !== null) ? loaded : null;
  return Screen ? <Screen first={first} /> : <>{preview}</>;
}
