"use client";
// "Hand off…" (one dialog) and "New session" (the step-by-step path, for
// agents' operators and experts) next to the list's heading, for people who
// may start one (decide()).

import Link from "next/link";
import { decide } from "@/lib/authz/decide";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { buttonClass } from "@/components/ui/button";
import { HandOffLink } from "@/features/hand-off/HandOffLink";

export function NewSessionLink() {
  const { me } = useWhoAmI();
  if (!me || !decide({ role: me.role, participantId: me.participantId }, undefined, "startSession").allowed) return null;
  return (
    <span className="ml-auto flex flex-wrap items-center gap-2">
      {/* From 640 px up the header has its own Hand off…; here it is a phone's way in. */}
      <HandOffLink className="sm:hidden" />
      <Link href="/sessions/new" prefetch={false} className={buttonClass("secondary")} data-testid="new-session">
        <Icon name="plus" /> New session
      </Link>
    </span>
  );
}
