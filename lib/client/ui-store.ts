"use client";
// UI-only state (never protocol data): time zone for timestamps, theme
// preference, and whether the live list is paused. Persisted per browser.

import { create } from "zustand";
import { createJSONStorage, persist } from "zustand/middleware";
import {
  applyTheme,
  parseThemePreference,
  readStoredThemePreference,
  resolveTheme,
  storeThemePreference,
  systemPrefersDark,
  type ThemePreference,
} from "@/lib/client/theme";

export type TimeZoneMode = "local" | "utc";

export interface UiState {
  timeZone: TimeZoneMode;
  /** Live list updates are held back while paused (the stream keeps running). */
  paused: boolean;
  theme: ThemePreference;
  setTimeZone(tz: TimeZoneMode): void;
  toggleTimeZone(): void;
  setPaused(paused: boolean): void;
  setTheme(theme: ThemePreference): void;
}

export const useUiStore = create<UiState>()(
  persist(
    (set, get) => ({
      timeZone: "local",
      paused: false,
      theme: "system",
      setTimeZone: (timeZone) => set({ timeZone }),
      toggleTimeZone: () => set({ timeZone: get().timeZone === "utc" ? "local" : "utc" }),
      setPaused: (paused) => set({ paused }),
      setTheme: (theme) => {
        const pref = parseThemePreference(theme);
        storeThemePreference(pref);
        applyTheme(resolveTheme(pref, systemPrefersDark()));
        set({ theme: pref });
      },
    }),
    {
      name: "baton.ui",
      version: 1,
      storage: createJSONStorage(() => window.localStorage),
      // Only the time zone persists here; the theme has its own key (read by the
      // pre-paint script) and "paused" deliberately resets on reload.
      partialize: (s) => ({ timeZone: s.timeZone }),
      merge: (persisted, current) => {
        const tz = (persisted as { timeZone?: unknown } | undefined)?.timeZone;
        return { ...current, timeZone: tz === "utc" ? "utc" : "local" };
      },
      // Rehydrated after mount (see Providers) so server and first client render agree.
      skipHydration: true,
    },
  ),
);

/** Read the persisted UI state into the store; call once after mount. */
export function hydrateUiStore(): void {
  void useUiStore.persist.rehydrate();
  useUiStore.setState({ theme: readStoredThemePreference() });
}
