"use client";
// useWhoAmI(): who is signed in (GET /auth/whoami), or null when nobody is.
// Re-checked when the tab regains focus and every few minutes, so a session
// that ended elsewhere (sign-out in another tab, idle timeout, disabled
// account) is noticed; the CSRF token it carries goes to the Connect
// transport through lib/client/csrf-store.ts.

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect } from "react";
import { fetchAuthMethods, fetchWhoAmI, type AuthMethods, type WhoAmI } from "@/lib/client/auth";
import { queryKeys } from "@/lib/client/query-keys";
import { csrfStore } from "@/lib/client/csrf-store";

export interface WhoAmIState {
  /** undefined while the first answer is pending; null when signed out. */
  me: WhoAmI | null | undefined;
  /** The last check failed (network); `me` keeps the previous answer. */
  error: boolean;
  refresh(): Promise<void>;
  /** Replace the cached answer (after sign-in, sign-out or a password change). */
  set(me: WhoAmI | null): void;
}

export function useWhoAmI(): WhoAmIState {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: queryKeys.whoami,
    queryFn: ({ signal }) => fetchWhoAmI(signal),
    staleTime: 60_000,
    refetchOnWindowFocus: true,
    refetchInterval: 5 * 60_000,
    retry: 2,
  });
  const me = q.data;
  useEffect(() => {
    if (me !== undefined) csrfStore.set(me?.csrfToken);
  }, [me]);
  const refresh = useCallback(async () => {
    await qc.invalidateQueries({ queryKey: queryKeys.whoami });
  }, [qc]);
  const set = useCallback(
    (next: WhoAmI | null) => {
      csrfStore.set(next?.csrfToken);
      qc.setQueryData(queryKeys.whoami, next);
    },
    [qc],
  );
  return { me, error: q.isError, refresh, set };
}

export function useAuthMethods(): AuthMethods | undefined {
  const q = useQuery({
    queryKey: queryKeys.authMethods,
    queryFn: ({ signal }) => fetchAuthMethods(signal),
    staleTime: Number.POSITIVE_INFINITY,
    retry: 2,
  });
  return q.data;
}
