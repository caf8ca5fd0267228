// Formatting helpers for the console: timestamps in local time or UTC (with an
// optional pinned zone so output is deterministic in tests and screenshots),
// durations, TTL countdowns, relative ages, percentages and sizes. Pure.
import { formatDuration } from "@/lib/base/duration";

export type TimeZoneChoice = "local" | "utc";

export interface TimeFormatOptions {
  /**
   * IANA zone used for "local" instead of the runtime's default zone, e.g.
   * "Europe/Berlin". Ignored for "utc".
   */
  pinnedZone?: string;
  /** Include the date (default true). */
  date?: boolean;
  /** Append the zone abbreviation, e.g. "UTC" or "GMT+1" (default true). */
  zone?: boolean;
  /** Include milliseconds (default false). */
  millis?: boolean;
}

// Intl.DateTimeFormat only for a pinned zone: a browser's first formatter
// costs 25–35 ms (measured in Chromium 156 on the 2-core machine, 2026-11-27),
// paid by the first timestamp a page hydrates. UTC and the runtime's own zone
// are read from Date's getters, which need none.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string, withZoneName: boolean): Intl.DateTimeFormat {
  const key = `${timeZone}|${withZoneName ? "z" : ""}`;
  let f = formatters.get(key);
  if (!f) {
    const opts: Intl.DateTimeFormatOptions = {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    };
    if (withZoneName) opts.timeZoneName = "short";
    f = new Intl.DateTimeFormat("en-US", opts);
    formatters.set(key, f);
  }
  return f;
}

const pad2 = (n: number): string => String(n).padStart(2, "0");

interface WallClock {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
  zone: string;
}

/** "GMT+1", "GMT-5", "GMT+5:30" for an offset east of UTC in minutes; "UTC" for none. */
export function offsetLabel(eastMinutes: number): string {
  if (eastMinutes === 0) return "UTC";
  const abs = Math.abs(eastMinutes);
  const minutes = abs % 60;
  return `GMT${eastMinutes > 0 ? "+" : "-"}${Math.floor(abs / 60)}${minutes ? `:${pad2(minutes)}` : ""}`;
}

function wallClock(n: number, timeZone: string | undefined, withZone: boolean): WallClock {
  if (timeZone === undefined || timeZone === "UTC") {
    const d = new Date(n);
    const utc = timeZone === "UTC";
    return {
      year: String(utc ? d.getUTCFullYear() : d.getFullYear()).padStart(4, "0"),
      month: pad2((utc ? d.getUTCMonth() : d.getMonth()) + 1),
      day: pad2(utc ? d.getUTCDate() : d.getDate()),
      hour: pad2(utc ? d.getUTCHours() : d.getHours()),
      minute: pad2(utc ? d.getUTCMinutes() : d.getMinutes()),
      second: pad2(utc ? d.getUTCSeconds() : d.getSeconds()),
      zone: utc ? "UTC" : offsetLabel(-d.getTimezoneOffset()),
    };
  }
  const parts = formatterFor(timeZone, withZone).formatToParts(new Date(n));
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? "";
  return {
    year: get("year"),
    month: get("month"),
    day: get("day"),
    hour: get("hour"),
    minute: get("minute"),
    second: get("second"),
    zone: get("timeZoneName"),
  };
}

/**
 * A count with thousands separators, as en-US writes it: "1,234,567". By hand,
 * not Number.toLocaleString: a page's first number formatter costs a browser
 * 10-20 ms (Chromium 156 on the 2-core machine, 2026-11-27), paid by the
 * first count the session page's live view renders.
 */
export function formatCount(n: number): string {
  const text = String(n);
  if (!Number.isFinite(n) || text.includes("e")) return text;
  const sign = n < 0 ? "-" : "";
  const [int = "", frac] = text.replace("-", "").split(".");
  const grouped = int.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${sign}${grouped}${frac !== undefined ? `.${frac}` : ""}`;
}

/** The IANA zone for a choice: "UTC", the pinned zone, or undefined (runtime default). */
export function zoneFor(choice: TimeZoneChoice, pinnedZone?: string): string | undefined {
  if (choice === "utc") return "UTC";
  return pinnedZone && isValidTimeZone(pinnedZone) ? pinnedZone : undefined;
}

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function isUsableMs(ms: number | bigint | undefined | null): ms is number | bigint {
  if (ms === undefined || ms === null) return false;
  const n = Number(ms);
  return Number.isFinite(n) && n > 0 && n < 8.64e15;
}

/**
 * "2025-01-31 14:05:09 UTC" (date, 24-hour time, zone). Returns "—" for
 * missing, zero or out-of-range timestamps.
 */
export function formatTimestamp(ms: number | bigint | undefined | null, choice: TimeZoneChoice, options: TimeFormatOptions = {}): string {
  if (!isUsableMs(ms)) return "—";
  const n = Number(ms);
  const withZone = options.zone !== false;
  const c = wallClock(n, zoneFor(choice, options.pinnedZone), withZone);
  let time = `${c.hour}:${c.minute}:${c.second}`;
  if (options.millis) time += `.${String(Math.trunc(n) % 1000).padStart(3, "0")}`;
  const date = `${c.year}-${c.month}-${c.day}`;
  let out = options.date === false ? time : `${date} ${time}`;
  if (withZone && c.zone) out += ` ${c.zone}`;
  return out;
}

/** Time of day only, "14:05:09", without the zone. */
export function formatClock(ms: number | bigint | undefined | null, choice: TimeZoneChoice, pinnedZone?: string): string {
  const opts: TimeFormatOptions = { date: false, zone: false };
  if (pinnedZone !== undefined) opts.pinnedZone = pinnedZone;
  return formatTimestamp(ms, choice, opts);
}

/**
 * Compact form for dense tables: the clock time when `ms` falls on the same
 * calendar day as `nowMs` in the chosen zone, else "MM-DD HH:mm".
 */
export function formatCompact(ms: number | bigint | undefined | null, choice: TimeZoneChoice, nowMs: number, pinnedZone?: string): string {
  if (!isUsableMs(ms)) return "—";
  const opts: TimeFormatOptions = { zone: false };
  if (pinnedZone !== undefined) opts.pinnedZone = pinnedZone;
  const full = formatTimestamp(ms, choice, opts); // "YYYY-MM-DD HH:mm:ss"
  const today = nowMs > 0 ? formatTimestamp(nowMs, choice, opts).slice(0, 10) : "";
  if (full.slice(0, 10) === today) return full.slice(11);
  return `${full.slice(5, 10)} ${full.slice(11, 16)}`;
}

/** ISO 8601 in UTC for `<time dateTime>`; "" when unusable. */
export function toIso(ms: number | bigint | undefined | null): string {
  if (!isUsableMs(ms)) return "";
  return new Date(Number(ms)).toISOString();
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Compact duration with two units of precision: "3m 05s" (lib/base/duration.ts). */
export { formatDuration } from "@/lib/base/duration";

/** An age at a glance, coarser than formatDuration so it does not tick every second: "45s", "12m", "2h 03m", "3d 04h". */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const abs = Math.max(0, ms);
  if (abs < MINUTE) return `${Math.floor(abs / SECOND)}s`;
  if (abs < HOUR) return `${Math.floor(abs / MINUTE)}m`;
  if (abs < DAY) return `${Math.floor(abs / HOUR)}h ${pad2(Math.floor((abs % HOUR) / MINUTE))}m`;
  return `${Math.floor(abs / DAY)}d ${pad2(Math.floor((abs % DAY) / HOUR))}h`;
}

export type TtlStatus =
  { kind: "unknown"; text: string } | { kind: "remaining"; ms: number; text: string; urgent: boolean } | { kind: "elapsed"; text: string };

/**
 * TTL countdown from an absolute deadline. Seconds are rounded up so the
 * display reaches "0s" exactly at the deadline; `urgent` under one minute.
 */
export function ttlStatus(expiresAtMs: number | bigint | undefined | null, nowMs: number): TtlStatus {
  if (!isUsableMs(expiresAtMs)) return { kind: "unknown", text: "—" };
  const remaining = Number(expiresAtMs) - nowMs;
  if (remaining < 0) return { kind: "elapsed", text: "elapsed" };
  const rounded = Math.ceil(remaining / SECOND) * SECOND;
  return { kind: "remaining", ms: remaining, text: formatDuration(rounded), urgent: remaining < MINUTE };
}

/** "just now", "12s ago", "5m ago", "3h ago", "2d ago"; future times read "in 5s". */
export function formatRelative(ms: number | bigint | undefined | null, nowMs: number): string {
  if (!isUsableMs(ms)) return "—";
  const diff = nowMs - Number(ms);
  const abs = Math.abs(diff);
  if (abs < 2 * SECOND) return "just now";
  let text: string;
  if (abs < MINUTE) text = `${Math.floor(abs / SECOND)}s`;
  else if (abs < HOUR) text = `${Math.floor(abs / MINUTE)}m`;
  else if (abs < DAY) text = `${Math.floor(abs / HOUR)}h`;
  else text = `${Math.floor(abs / DAY)}d`;
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}

/** A 0..1 fraction as a whole percentage, clamped: 0.304 → "30%". */
export function formatPercent(fraction: number | undefined): string {
  if (fraction === undefined || !Number.isFinite(fraction)) return "—";
  return `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
}

/** Byte sizes: "0 B", "512 B", "1.5 KB", "2.0 MB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Short label for a mode id: "macp.mode.handoff.v1" → "Handoff". */
export function modeLabel(mode: string): string {
  // v0.1 file handoffs in the session list (FILE_HANDOFF_MODE; the label of lib/views/file-handoffs.ts V01_MODE_LABEL).
  if (mode === "v0.1.file") return "v0.1 file";
  const m = /^macp\.mode\.([a-z_]+)\.v\d+$/.exec(mode);
  if (!m || !m[1]) return mode || "—";
  const name = m[1].replace(/_/g, " ");
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** Split "OfferPending" → "Offer pending". */
export function humanizePhase(phase: string): string {
  if (!phase) return "—";
  const words = phase.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(" ");
  return words.map((w, i) => (i === 0 ? w : w.toLowerCase())).join(" ");
}
