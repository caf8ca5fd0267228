"use client";
// Header toggles: time zone (local/UTC) and theme (system → light → dark).

import { nextThemePreference, type ThemePreference } from "@/lib/client/theme";
import { useUiStore } from "@/lib/client/ui-store";
import { Icon } from "@/components/ui/Icon";

const THEME_LABEL: Record<ThemePreference, string> = { system: "System", light: "Light", dark: "Dark" };
const THEME_ICON = { system: "monitor", light: "sun", dark: "moon" } as const;

const buttonClass =
  "inline-flex h-8 items-center gap-1.5 rounded-md px-1.5 text-xs min-[400px]:px-2 font-medium text-slate-700 ring-1 ring-slate-300 ring-inset hover:bg-slate-100 dark:text-slate-200 dark:ring-slate-600 dark:hover:bg-slate-800";

export function TimeZoneToggle() {
  const tz = useUiStore((s) => s.timeZone);
  const toggle = useUiStore((s) => s.toggleTimeZone);
  const label = tz === "utc" ? "UTC" : "Local";
  return (
    <button
      type="button"
      className={buttonClass}
      onClick={toggle}
      aria-label={`Times shown in ${tz === "utc" ? "UTC" : "local time"}. Switch to ${tz === "utc" ? "local time" : "UTC"}`}
      title="Switch between local time and UTC"
      data-testid="tz-toggle"
      suppressHydrationWarning
    >
      <Icon name="globe" />
      <span className="hidden sm:inline">{label}</span>
    </button>
  );
}

export function ThemeToggle() {
  const theme = useUiStore((s) => s.theme);
  const setTheme = useUiStore((s) => s.setTheme);
  const next = nextThemePreference(theme);
  return (
    <button
      type="button"
      className={buttonClass}
      onClick={() => setTheme(next)}
      aria-label={`Theme: ${THEME_LABEL[theme]}. Switch to ${THEME_LABEL[next]}`}
      title={`Theme: ${THEME_LABEL[theme]} (click for ${THEME_LABEL[next]})`}
      data-testid="theme-toggle"
      data-theme-pref={theme}
    >
      <Icon name={THEME_ICON[theme]} />
      <span className="hidden sm:inline">{THEME_LABEL[theme]}</span>
    </button>
  );
}
