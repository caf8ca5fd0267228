// Next.js's app router context for component tests, as the app provides it:
// links read it, nothing navigates.

import type { ReactNode } from "react";
import { AppRouterContext, type AppRouterInstance } from "next/dist/shared/lib/app-router-context.shared-runtime";

const inertRouter: AppRouterInstance = {
  back: () => undefined,
  forward: () => undefined,
  refresh: () => undefined,
  push: () => undefined,
  replace: () => undefined,
  prefetch: () => undefined,
  bfcacheId: "test",
};

export function WithAppRouter({ children }: { children: ReactNode }) {
  return <AppRouterContext.Provider value={inertRouter}>{children}</AppRouterContext.Provider>;
}
