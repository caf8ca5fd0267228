"use client";
// Stream lifetime beyond React unmounts: abort synchronously on `pagehide`
// (tab closed, navigated away, page frozen into the back/forward cache), and
// restart when a page comes back from that cache (`pageshow` persisted).

import { useEffect, useState } from "react";

/** Abort `controller` when the page is hidden for good; returns a disposer. */
export function abortOnPageHide(controller: AbortController): () => void {
  const onHide = (): void => controller.abort();
  window.addEventListener("pagehide", onHide);
  return () => window.removeEventListener("pagehide", onHide);
}

/** A number that changes when the page is restored from the back/forward cache. */
export function useStreamLifetime(): number {
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const onShow = (e: PageTransitionEvent): void => {
      if (e.persisted) setGeneration((g) => g + 1);
    };
    window.addEventListener("pageshow", onShow);
    return () => window.removeEventListener("pageshow", onShow);
  }, []);
  return generation;
}
