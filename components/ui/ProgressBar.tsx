// Accessible progress bar: role=progressbar with a visible percentage.

import clsx from "clsx";
import { formatPercent } from "@/lib/views/format";

export function ProgressBar({
  value,
  label,
  size = "md",
  tone = "progress",
}: {
  /** 0..1 */
  value: number | undefined;
  label: string;
  size?: "sm" | "md";
  tone?: "progress" | "success" | "danger";
}) {
  const pct = value === undefined ? 0 : Math.round(Math.min(1, Math.max(0, value)) * 100);
  return (
    <div className="flex items-center gap-2">
      <div
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={value === undefined ? "No progress reported" : `${pct}%`}
        className={clsx(
          "relative flex-1 overflow-hidden rounded-full bg-slate-200 ring-1 ring-slate-300 ring-inset dark:bg-slate-800 dark:ring-slate-600",
          size === "sm" ? "h-1.5" : "h-3",
        )}
      >
        <div
          className={clsx(
            "h-full rounded-full transition-[width] duration-500 motion-reduce:transition-none",
            tone === "success"
              ? "bg-emerald-600 dark:bg-emerald-400"
              : tone === "danger"
                ? "bg-red-600 dark:bg-red-400"
                : "bg-violet-600 dark:bg-violet-400",
          )}
          style={{ width: `${pct}%` }}
        />
      </div>
      <span className={clsx("w-10 text-right tabular-nums", size === "sm" ? "text-xs" : "text-sm font-semibold")}>
        {formatPercent(value ?? 0)}
      </span>
    </div>
  );
}
