"use client";
// Sends signed-out visitors to /login?returnTo=… (when reads need sign-in, or
// the page acts) and people with a one-time password to the password change.
// Reading pages render at once; pages that act wait for the sign-in check,
// except the inbox when the server found the request signed in (its HTML is
// that person's first view).

import { usePathname, useRouter } from "next/navigation";
import { useEffect, useState, type ReactNode } from "react";
import { gateDecision } from "@/lib/views/sign-in";
import { useAuthMethods, useWhoAmI } from "@/lib/client/use-whoami";

export function AuthGate({ children, serverSignedIn = false }: { children: ReactNode; serverSignedIn?: boolean }) {
  const pathname = usePathname();
  const router = useRouter();
  const { me, error } = useWhoAmI();
  const methods = useAuthMethods();
  // The query string is read after mount (useSearchParams would need a Suspense boundary here).
  const [search, setSearch] = useState("");
  useEffect(() => setSearch(window.location.search), [pathname]);
  const decision = gateDecision({ pathname, search, me, methods, serverSignedIn });

  const redirectTo = decision.kind === "redirect" ? decision.to : null;
  useEffect(() => {
    if (redirectTo !== null) router.replace(redirectTo);
  }, [redirectTo, router]);

  if (decision.kind === "show") return <>{children}</>;
  return (
    <p className="text-sm text-slate-700 dark:text-slate-300" aria-live="polite" data-testid="auth-gate">
      {decision.kind === "redirect"
        ? "Taking you to the sign-in page…"
        : error
          ? "Can’t check your sign-in: the console server is unreachable. Retrying…"
          : "Checking your sign-in…"}
    </p>
  );
}
