"use client";
// What LiveSession loads after the page's `load` event: the live session
// screen with the query cache it keeps its stream state in. Kept in its own
// module so TanStack Query arrives with the live view, not before `load`.

import type { ComponentProps } from "react";
import { QueryProvider } from "@/lib/client/query-provider";
import { SessionScreen } from "@/features/session/SessionScreen";

export function LiveSessionScreen(props: ComponentProps<typeof SessionScreen>) {
  return (
    <QueryProvider>
      <SessionScreen {...props} />
    </QueryProvider>
  );
}
