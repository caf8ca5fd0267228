"use client";
// "Copy" next to an id: writes it to the clipboard and says "Copied" briefly.

import clsx from "clsx";
import { useState } from "react";

export function CopyButton({ text, label, className }: { text: string; label: string; className?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className={clsx("rounded px-1 text-xs text-blue-800 underline-offset-2 hover:underline dark:text-sky-300", className ?? "ml-1")}
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(
          () => {
            setCopied(true);
            setTimeout(() => setCopied(false), 1500);
          },
          () => undefined,
        );
      }}
      aria-label={label}
    >
      {copied ? "Copied" : "Copy"}
    </button>
  );
}
