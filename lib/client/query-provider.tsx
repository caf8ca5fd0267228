"use client";
// TanStack Query client for the pages that use it (the session list, the
// session page's live view, /inbox, /sessions/new, /admin): each wraps its
// client screen in <QueryProvider>. It is not in the root layout, so pages
// and the header that need no query do not load TanStack Query.
//
// In the browser every <QueryProvider> shares one module-level client, so the
// cache (stream states kept under query keys, the directory…) survives
// client-side navigations from one page to another as it did when the
// provider sat in the layout. On the server each render makes its own client:
// a client is never shared between requests.
//
// Stream hooks write folded state into this cache (keys in
// lib/client/query-keys.ts); nothing refetches on focus because the data is
// kept live by streams, not by polling.

import { isServer, QueryClient, QueryClientProvider } from "@tanstack/react-query";
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

let browserClient: QueryClient | undefined;

/** The browser's one client; on the server, a new client on every call. */
export function getQueryClient(): QueryClient {
  if (isServer) return makeQueryClient();
  browserClient ??= makeQueryClient();
  return browserClient;
}

export function QueryProvider({ children }: { children: ReactNode }) {
  // useState keeps a server render's client stable across re-renders of this provider.
  const [client] = useState(getQueryClient);
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
