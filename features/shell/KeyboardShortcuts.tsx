"use client";
// Keys that work on every page (features/shell/shortcuts.ts decides what a key
// does): Esc leaves a text field, "/" goes to the search box (from anywhere,
// a focused row included; from a page without one, to the session list's),
// "?" opens the list of shortcuts. Pages add their own (the timeline's j/k,
// Enter, End/G), listed here too.

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { shortcutFor, SHORTCUTS } from "@/features/shell/shortcuts";

const SEARCH = 'input[type="search"]';

function focusSearch(): boolean {
  const input = document.querySelector<HTMLInputElement>(SEARCH);
  if (!input) return false;
  input.focus();
  input.select();
  return true;
}

/** After navigating to the list, focus its search box once it is there (bounded wait). */
function focusSearchWhenReady(): () => void {
  if (focusSearch()) return () => undefined;
  const observer = new MutationObserver(() => {
    if (focusSearch()) stop();
  });
  const timer = setTimeout(() => stop(), 5_000);
  function stop(): void {
    observer.disconnect();
    clearTimeout(timer);
  }
  observer.observe(document.body, { childList: true, subtree: true });
  return stop;
}

export function KeyboardShortcuts() {
  const router = useRouter();
  const dialog = useRef<HTMLDialogElement | null>(null);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    let stopWaiting: () => void = () => undefined;
    const onKey = (e: KeyboardEvent): void => {
      if (e.defaultPrevented) return;
      const active = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      const action = shortcutFor(
        { key: e.key, altKey: e.altKey, ctrlKey: e.ctrlKey, metaKey: e.metaKey },
        {
          tag: active?.tagName ?? "",
          editable: active?.isContentEditable ?? false,
          inputType: active instanceof HTMLInputElement ? active.type : "",
          inDialog: Boolean(active?.closest("dialog")),
        },
      );
      switch (action) {
        case "leave-field":
          active?.blur();
          break;
        case "search":
          if (!focusSearch()) {
            router.push("/");
            stopWaiting();
            stopWaiting = focusSearchWhenReady();
          }
          break;
        case "help":
          setOpen(true);
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      stopWaiting();
    };
  }, [router]);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);

  return (
    <dialog
      ref={dialog}
      aria-labelledby="shortcuts-title"
      onClose={() => setOpen(false)}
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-lg border border-slate-300 bg-white p-0 text-slate-900 shadow-xl backdrop:bg-slate-950/50 dark:border-slate-700 dark:bg-slate-950 dark:text-slate-100"
      data-testid="shortcuts-dialog"
    >
      <div className="space-y-3 p-4">
        <h2 id="shortcuts-title" className="text-base font-semibold">
          Keyboard shortcuts
        </h2>
        <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1.5 text-sm">
          {SHORTCUTS.map((s) => (
            <div key={s.keys.join(" ")} className="contents">
              <dt className="flex gap-1">
                {s.keys.map((k) => (
                  <kbd
                    key={k}
                    className="rounded border border-slate-300 bg-slate-50 px-1.5 font-mono text-xs dark:border-slate-600 dark:bg-slate-900"
                  >
                    {k}
                  </kbd>
                ))}
              </dt>
              <dd className="text-slate-800 dark:text-slate-200">{s.what}</dd>
            </div>
          ))}
        </dl>
        <form method="dialog" className="flex justify-end">
          <button
            type="submit"
            className="rounded-md px-3 py-1.5 text-sm font-medium ring-1 ring-slate-300 ring-inset hover:bg-slate-100 dark:ring-slate-600 dark:hover:bg-slate-800"
            data-testid="shortcuts-close"
          >
            Close
          </button>
        </form>
      </div>
    </dialog>
  );
}
