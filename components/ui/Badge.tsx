// Status and outcome badges: icon + text, never colour alone; tone
// colours meet WCAG AA in light and dark themes.

import clsx from "clsx";
import type { BadgeInfo, Tone } from "@/lib/views/labels";
import { Icon } from "@/components/ui/Icon";

export const TONE_CLASSES: Record<Tone, string> = {
  neutral: "bg-slate-100 text-slate-800 ring-slate-300 dark:bg-slate-800 dark:text-slate-100 dark:ring-slate-600",
  info: "bg-blue-50 text-blue-800 ring-blue-300 dark:bg-blue-950 dark:text-blue-200 dark:ring-blue-800",
  progress: "bg-violet-50 text-violet-800 ring-violet-300 dark:bg-violet-950 dark:text-violet-200 dark:ring-violet-800",
  warning: "bg-amber-50 text-amber-900 ring-amber-300 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-800",
  success: "bg-emerald-50 text-emerald-800 ring-emerald-300 dark:bg-emerald-950 dark:text-emerald-200 dark:ring-emerald-800",
  danger: "bg-red-50 text-red-800 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
  muted: "bg-slate-100 text-slate-700 ring-slate-300 dark:bg-slate-800 dark:text-slate-300 dark:ring-slate-600",
};

export function Badge({
  info,
  kind,
  size = "sm",
  className,
}: {
  info: BadgeInfo;
  /** Prefix read by screen readers, e.g. "Phase". */
  kind?: string;
  size?: "sm" | "md";
  className?: string;
}) {
  return (
    <span
      className={clsx(
        "inline-flex max-w-full items-center gap-1 rounded-full font-medium whitespace-nowrap ring-1 ring-inset",
        size === "sm" ? "px-2 py-0.5 text-xs" : "px-2.5 py-1 text-sm",
        TONE_CLASSES[info.tone],
        className,
      )}
      title={info.hint}
      data-badge={info.label}
    >
      <Icon name={info.icon} className={size === "sm" ? "h-3.5 w-3.5 shrink-0" : "h-4 w-4 shrink-0"} />
      {kind ? <span className="sr-only">{kind}: </span> : null}
      <span className="truncate">{info.label}</span>
    </span>
  );
}

export function OutcomeBadge({ positive, size }: { positive: boolean; size?: "sm" | "md" }) {
  const info: BadgeInfo = positive
    ? { label: "Positive outcome", tone: "success", icon: "check-circle", hint: "outcome_positive = true" }
    : { label: "Negative outcome", tone: "danger", icon: "x", hint: "outcome_positive = false" };
  return <Badge info={info} {...(size ? { size } : {})} />;
}
