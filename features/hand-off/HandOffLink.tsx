"use client";
// "Hand off…": opens the one-dialog hand-off (/handoff), for people whose
// role may start a session (the rules table's minimum role; the header is on
// every page, so it stays clear of decide()'s protocol rules, which the
// /handoff page and the server apply). `compact` is the header's, from
// 640 px up only: a phone's header has no room left, and the list's full
// button is a phone's way in.

import clsx from "clsx";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { roleAtLeast } from "@/lib/authz/roles";
import { MINIMUM_ROLE } from "@/lib/authz/rules";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { buttonClass } from "@/components/ui/button";

export function HandOffLink({ compact = false, className }: { compact?: boolean; className?: string }) {
  const { me } = useWhoAmI();
  const pathname = usePathname();
  if (!me || me.participantId === "" || !roleAtLeast(me.role, MINIMUM_ROLE.startSession)) return null;
  if (compact && pathname === "/handoff") return null;
  const href =
    pathname && pathname !== "/" && pathname !== "/handoff" ? `/handoff?${new URLSearchParams({ from: pathname }).toString()}` : "/handoff";
  return (
    <Link
      href={href}
      // On every page's header: no prefetch of /handoff (with each page's own ?from=) for every page view.
      prefetch={false}
      className={clsx(buttonClass("primary", compact ? "min-h-8 max-sm:hidden" : undefined), className)}
      data-testid={compact ? "header-hand-off" : "hand-off"}
    >
      <Icon name="send" className="h-4 w-4" />
      Hand off…
    </Link>
  );
}
