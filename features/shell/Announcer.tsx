"use client";
// The single polite aria-live region. Rendered once, in the root layout.

import { useAnnouncerStore } from "@/lib/client/announcer";

export function Announcer() {
  const message = useAnnouncerStore((s) => s.message);
  const nonce = useAnnouncerStore((s) => s.nonce);
  return (
    <div role="status" aria-live="polite" aria-atomic="true" className="sr-only" data-testid="announcer">
      {/* Keyed by nonce so an identical sentence is announced again. */}
      <span key={nonce}>{message}</span>
    </div>
  );
}
