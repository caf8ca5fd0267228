"use client";
// The session list in two steps, as the session page (LiveSession.tsx): the
// server-drawn first view (`preview`, ListPreview.tsx) is what the browser
// paints, with no JavaScript of the list's own before `load`; right after
// `load` (not waiting for an idle period: someone may be about to type or
// move with the keyboard) the live list's code (SessionListScreen: filters,
// keyboard, virtualizer; its own live machinery follows) is fetched and takes
// over, with what was typed, picked or focused in the first view meanwhile
// (carry-over.ts). A press on the first view holds the swap back until its
// click (lib/client/swap-after-press.ts), so a row pressed just then still opens.
// Without a first view (signed out, the console unavailable) the live list
// loads at once.

import { useMemo, type ReactNode } from "react";
import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { useSwapWhenUnpressed } from "@/lib/client/swap-after-press";
import { carryOver } from "@/features/sessions-list/carry-over";
import type { SessionListScreenProps } from "@/features/sessions-list/SessionListScreen";

const loadScreen = componentLoader<SessionListScreenProps>(() =>
  import("@/features/sessions-list/SessionListScreen").then((m) => m.SessionListScreen),
);

export function LiveSessionList({ preview, ...props }: Omit<SessionListScreenProps, "carried"> & { preview: ReactNode }) {
  const loaded = useAfterLoadComponent(loadScreen, "the session list", props.first === undefined ? "now" : "after-load");
  const Screen = useSwapWhenUnpressed(loaded !== null) ? loaded : null;
  // Read in the render that swaps the first view out, while it is still in the document.
  const carried = useMemo(
    () => (Screen ? carryOver(document.querySelector("[data-list-preview]"), document.activeElement) : undefined),
    [Screen],
  );
  return Screen ? <Screen {...props} carried={carried} /> : <>{preview}</>;
}
