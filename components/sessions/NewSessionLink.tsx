"use client";
// "New session" next to the list's heading, for people who may start one (decide()).

import Link from "next/link";
import { decide } from "@/lib/authz/decide";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/Icon";
import { buttonClass } from "@/components/ui/forms";

export function NewSessionLink() {
  const { me } = useWhoAmI();
  if (!me || !decide({ role: me.role, participantId: me.participantId }, undefined, "startSession").allowed) return null;
  return (
    <Link href="/sessions/new" className={buttonClass("primary", "ml-auto")} data-testid="new-session">
      <Icon name="plus" /> New session
    </Link>
  );
}
