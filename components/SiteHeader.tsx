"use client";
// Top bar: brand, navigation, connection indicator, preferences.

import clsx from "clsx";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { HeaderConnectionIndicator } from "@/components/ConnectionIndicator";
import { ThemeToggle, TimeZoneToggle } from "@/components/HeaderControls";

function Logo() {
  return (
    <svg viewBox="0 0 32 32" className="h-7 w-7" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" className="fill-blue-700 dark:fill-blue-500" />
      <g transform="rotate(-38 16 16)">
        <rect x="4.5" y="12.6" width="23" height="6.8" rx="3.4" fill="#fff" />
        <path d="M12.5 12.6v6.8M19.5 12.6v6.8" stroke="#1d4ed8" strokeWidth="1.4" opacity=".45" />
      </g>
    </svg>
  );
}

export function SiteHeader() {
  const pathname = usePathname();
  const onSessions = pathname === "/" || pathname.startsWith("/sessions");
  return (
    <header className="sticky top-0 z-30 border-b border-slate-200 bg-white/95 backdrop-blur dark:border-slate-800 dark:bg-slate-950/95">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm dark:focus:bg-slate-900"
      >
        Skip to content
      </a>
      <div className="mx-auto flex h-14 max-w-[1600px] items-center gap-3 px-3 sm:px-5">
        <Link href="/" className="flex items-center gap-2 rounded-md font-semibold tracking-tight" aria-label="Baton home">
          <Logo />
          <span className="hidden text-lg min-[420px]:inline">Baton</span>
        </Link>
        <nav aria-label="Main" className="ml-1 sm:ml-4">
          <ul className="flex items-center gap-1">
            <li>
              <Link
                href="/"
                aria-current={onSessions ? "page" : undefined}
                className={clsx(
                  "rounded-md px-2.5 py-1.5 text-sm font-medium",
                  onSessions
                    ? "bg-slate-100 text-slate-900 dark:bg-slate-800 dark:text-white"
                    : "text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800",
                )}
              >
                Sessions
              </Link>
            </li>
          </ul>
        </nav>
        <div className="ml-auto flex items-center gap-2">
          <span data-testid="site-connection" className="contents">
            <HeaderConnectionIndicator />
          </span>
          <TimeZoneToggle />
          <ThemeToggle />
        </div>
      </div>
    </header>
  );
}
