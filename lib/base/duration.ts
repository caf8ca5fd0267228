// Durations in words, one module for every layer (pure; the browser uses it
// too). Three formats, each asserted by its readers' tests:
// - formatDuration: the console's compact form with two units ("3m 05s");
// - formatDurationCli: the CLI's terse form ("1h 30m", "500ms");
// - formatDurationWords: a wait in a sentence, rounded up ("in 5 min"),
//   decide()'s wording and the escalation panel's.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const pad2 = (n: number): string => String(n).padStart(2, "0");

/**
 * Compact duration with two units of precision: "0s", "45s", "3m 05s",
 * "2h 03m", "1d 04h". Negative durations are formatted by magnitude.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const abs = Math.abs(ms);
  if (abs < MINUTE) return `${Math.floor(abs / SECOND)}s`;
  if (abs < HOUR) return `${Math.floor(abs / MINUTE)}m ${pad2(Math.floor((abs % MINUTE) / SECOND))}s`;
  if (abs < DAY) return `${Math.floor(abs / HOUR)}h ${pad2(Math.floor((abs % HOUR) / MINUTE))}m`;
  return `${Math.floor(abs / DAY)}d ${pad2(Math.floor((abs % DAY) / HOUR))}h`;
}

/** The CLI's form: "1h", "15m", "90s", "1h 30m", "500ms". */
export function formatDurationCli(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return [h ? `${h}h` : "", m ? `${m}m` : "", sec ? `${sec}s` : ""].filter(Boolean).join(" ") || "0s";
}

/** In a sentence, rounded up: "45 s", "2 min", "3 h" (how long until something happens). */
export function formatDurationWords(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.ceil(s / 60);
  if (m < 120) return `${m} min`;
  return `${Math.ceil(m / 60)} h`;
}
