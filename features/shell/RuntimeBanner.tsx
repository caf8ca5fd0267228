"use client";
// The outage banner on every page: when the console cannot reach its MACP
// runtime it says so, naming the runtime and its address as the part that is
// down (the console still serves what it has), and it goes away by itself
// when the runtime answers again. Polling starts after the page has loaded
// (lib/client/runtime-status.ts). Signed out where reads need sign-in, the
// status answers 401 and nothing is shown.

import { useEffect } from "react";
import { afterLoadAndIdle } from "@/lib/client/after-load";
import { startRuntimeStatusPoller, useOutage } from "@/lib/client/runtime-status";
import { Icon } from "@/components/ui/Icon";
import { Timestamp } from "@/components/ui/Time";

export function RuntimeBanner() {
  useEffect(() => {
    let stop: (() => void) | undefined;
    const cancel = afterLoadAndIdle(window, () => {
      stop = startRuntimeStatusPoller({
        fetch: (url, init) => window.fetch(url, init),
        setTimeout: (fn, ms) => window.setTimeout(fn, ms),
        clearTimeout: (h) => window.clearTimeout(h as number),
        hidden: () => document.visibilityState === "hidden",
        onVisible: (fn) => {
          const listener = (): void => {
            if (document.visibilityState === "visible") fn();
          };
          document.addEventListener("visibilitychange", listener);
          return () => document.removeEventListener("visibilitychange", listener);
        },
      });
    });
    return () => {
      cancel();
      stop?.();
    };
  }, []);
  const outage = useOutage();
  if (!outage) return null;
  return (
    <div
      role="alert"
      className="border-b border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 sm:px-5 print:hidden dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50"
      data-testid="outage-banner"
      data-outage={outage.kind}
    >
      <p className="mx-auto flex max-w-[1600px] items-start gap-2">
        <Icon name="alert" className="mt-0.5 h-4 w-4 shrink-0" />
        {outage.kind === "runtime" ? (
          <span>
            <strong className="font-semibold">The MACP runtime is unreachable</strong> (
            {outage.runtimeKind === "embedded" ? "embedded runtime" : "external runtime"} at{" "}
            <code className="font-mono text-xs">{outage.address}</code>
            {outage.sinceMs > 0 ? (
              <>
                , since <Timestamp ms={outage.sinceMs} clockOnly />
              </>
            ) : null}
            ). The console is up and shows what it already has; live updates and actions resume by themselves when the runtime answers
            again.
          </span>
        ) : (
          <span>
            <strong className="font-semibold">Baton’s console server is not answering.</strong> Check your network; the page reconnects by
            itself.
          </span>
        )}
      </p>
    </div>
  );
}
