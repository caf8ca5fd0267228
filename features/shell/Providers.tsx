"use client";
// Client-side providers: persisted UI preferences (after mount, so the first
// render matches the server), and the theme following the system while the
// preference is "system". The TanStack Query client is not here: the pages
// that use it wrap their screens in <QueryProvider> (lib/client/query-provider.tsx),
// so the layout does not load TanStack Query.

import { useEffect, type ReactNode } from "react";
import { applyTheme, resolveTheme } from "@/lib/client/theme";
import { hydrateUiStore, useUiStore } from "@/lib/client/ui-store";
// At the page's `load` event, the code its live view needs (evaluated with the shell, before the page's own modules).
import "@/features/shell/page-code";

function ThemeSync() {
  const theme = useUiStore((s) => s.theme);
  useEffect(() => {
    const mq = window.matchMedia("(prefers-color-scheme: dark)");
    const apply = (): void => applyTheme(resolveTheme(theme, mq.matches));
    apply();
    if (theme !== "system") return;
    mq.addEventListener("change", apply);
    return () => mq.removeEventListener("change", apply);
  }, [theme]);
  return null;
}

export function Providers({ children }: { children: ReactNode }) {
  useEffect(() => {
    hydrateUiStore();
  }, []);
  return (
    <>
      <ThemeSync />
      {children}
    </>
  );
}
