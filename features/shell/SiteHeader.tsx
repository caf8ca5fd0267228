"use client";
// Top bar: brand, navigation (sessions, the inbox with its live count, the
// v0.1 file handoffs when the console watches directories),
// connection indicator, preferences, and the signed-in person.
//
// No link here prefetches (prefetch={false}): a prefetch is a server render of
// the page it points to, twice (route tree and segment) for these dynamic
// pages, and they came for every page view while its own live view was
// loading, on the same cores.

import clsx from "clsx";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { HeaderConnectionIndicator } from "@/components/ui/ConnectionIndicator";
import { ThemeToggle, TimeZoneToggle } from "@/features/shell/HeaderControls";
import { UserMenu } from "@/features/sign-in/UserMenu";
import { Icon } from "@/components/ui/Icon";
import { InboxNavLink } from "@/features/inbox/InboxNavLink";
import { HandOffLink } from "@/features/hand-off/HandOffLink";
import { useWhoAmI } from "@/lib/client/use-whoami";

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

const navClass = (active: boolean): string =>
  clsx(
    // Tighter on the narrowest phones, so Sessions, Inbox (with its count) and Files fit beside the controls.
    "rounded-md px-1.5 py-1.5 text-sm font-medium min-[400px]:px-2 sm:px-2.5",
    active
      ? "bg-slate-100 text-slate-900 dark:bg-slate-800 dark:text-white"
      : "text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800",
  );

export function SiteHeader({ filesEnabled = false }: { filesEnabled?: boolean }) {
  const pathname = usePathname();
  const { me } = useWhoAmI();
  const onLogin = pathname === "/login";
  const onSessions = pathname === "/" || (pathname.startsWith("/sessions") && pathname !== "/sessions/new");
  return (
    <header className="sticky top-0 z-30 print:hidden border-b border-slate-200 bg-white/95 backdrop-blur dark:border-slate-800 dark:bg-slate-950/95">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-sm dark:focus:bg-slate-900"
      >
        Skip to content
      </a>
      <div className="mx-auto flex h-14 max-w-[1600px] items-center gap-1.5 px-3 min-[400px]:gap-2 sm:gap-3 sm:px-5">
        <Link href="/" prefetch={false} className="flex items-center gap-2 rounded-md font-semibold tracking-tight" aria-label="Baton home">
          <Logo />
          <span className="hidden text-lg min-[520px]:inline">Baton</span>
        </Link>
        {onLogin ? null : (
          // With "Files" too, a narrow header lets the links scroll rather than widen the page.
          <nav aria-label="Main" className={clsx("sm:ml-3", filesEnabled && "min-w-0 overflow-x-auto")}>
            <ul className="flex items-center gap-0.5 sm:gap-1">
              <li>
                <Link href="/" prefetch={false} aria-current={onSessions ? "page" : undefined} className={navClass(onSessions)}>
                  Sessions
                </Link>
              </li>
              {me ? (
                <li>
                  <InboxNavLink active={pathname === "/inbox"} className={navClass(pathname === "/inbox")} />
                </li>
              ) : null}
              {filesEnabled ? (
                <li>
                  <Link
                    href="/files"
                    prefetch={false}
                    aria-current={pathname.startsWith("/files") ? "page" : undefined}
                    className={clsx(navClass(pathname.startsWith("/files")), "inline-flex items-center gap-1")}
                    data-testid="nav-files"
                  >
                    {/* An icon alone on phones; the word for everyone else and for screen readers. */}
                    <Icon name="document" className="h-4 w-4 sm:hidden" />
                    <span className="max-sm:sr-only">Files</span>
                  </Link>
                </li>
              ) : null}
            </ul>
          </nav>
        )}
        <div className="ml-auto flex items-center gap-1 min-[400px]:gap-1.5 sm:gap-2">
          {onLogin ? null : <HandOffLink compact />}
          {onLogin ? null : (
            /* With the extra "Files" link a 390 px header keeps only the status dot (the words stay for screen readers). */
            <span
              data-testid="site-connection"
              className={clsx("contents", filesEnabled && "max-sm:[&_[data-connection]>span:last-child]:sr-only")}
            >
              <HeaderConnectionIndicator />
            </span>
          )}
          <TimeZoneToggle />
          <ThemeToggle />
          <UserMenu />
        </div>
      </div>
    </header>
  );
}
