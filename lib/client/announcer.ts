"use client";
// The one place that speaks to screen readers: components call announce();
// the single <Announcer/> in the root layout renders the aria-live region.

import { create } from "zustand";

interface AnnouncerState {
  message: string;
  /** Bumped per announcement so repeating the same sentence is still read. */
  nonce: number;
  announce(message: string): void;
}

export const useAnnouncerStore = create<AnnouncerState>()((set, get) => ({
  message: "",
  nonce: 0,
  announce: (message) => set({ message, nonce: get().nonce + 1 }),
}));

export function announce(message: string): void {
  if (message.trim() !== "") useAnnouncerStore.getState().announce(message);
}
