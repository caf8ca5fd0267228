"use client";
// TanStack Query client for the browser. Stream hooks write folded state into
// this cache (keys in lib/client/query-keys.ts); nothing refetches on focus
// because the data is kept live by streams, not by polling.

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: Number.POSITIVE_INFINITY,
        gcTime: 5 * 60_000,
        refetchOnWindowFocus: false,
        refetchOnReconnect: false,
        retry: false,
        // Stream states hold protobuf messages and Maps; structural sharing
        // would deep-walk thousands of events on every flush.
        structuralSharing: false,
      },
    },
  });
}

export function QueryProvider({ children }: { children: ReactNode }) {
  const [client] = useState(makeQueryClient);
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
