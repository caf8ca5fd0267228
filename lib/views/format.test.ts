import { describe, expect, it } from "vitest";
import {
  formatBytes,
  formatClock,
  formatCount,
  formatCompact,
  formatAge,
  formatDuration,
  formatPercent,
  formatRelative,
  formatTimestamp,
  humanizePhase,
  modeLabel,
  offsetLabel,
  toIso,
  ttlStatus,
  zoneFor,
} from "@/lib/views/format";

// vitest.config.ts pins TZ=UTC for the process; zones below are pinned explicitly.
const T = Date.UTC(2025, 0, 31, 14, 5, 9, 42); // 2025-01-31T14:05:09.042Z

describe("formatTimestamp", () => {
  it("formats UTC with date, 24-hour time and zone", () => {
    expect(formatTimestamp(T, "utc")).toBe("2025-01-31 14:05:09 UTC");
  });

  it("accepts bigint timestamps", () => {
    expect(formatTimestamp(BigInt(T), "utc")).toBe("2025-01-31 14:05:09 UTC");
  });

  it("formats local time in a pinned zone", () => {
    expect(formatTimestamp(T, "local", { pinnedZone: "Europe/Berlin" })).toBe("2025-01-31 15:05:09 GMT+1");
    expect(formatTimestamp(T, "local", { pinnedZone: "America/New_York" })).toBe("2025-01-31 09:05:09 EST");
  });

  it("crosses the date line in the pinned zone", () => {
    expect(formatTimestamp(T, "local", { pinnedZone: "Pacific/Kiritimati", zone: false })).toBe("2025-02-01 04:05:09");
  });

  it("uses the process zone for local when nothing is pinned (TZ=UTC here)", () => {
    expect(formatTimestamp(T, "local", { zone: false })).toBe("2025-01-31 14:05:09");
  });

  it("reads the process zone from Date, labelled by its offset (no Intl formatter)", () => {
    expect(formatTimestamp(T, "local")).toBe("2025-01-31 14:05:09 UTC");
    const saved = process.env.TZ;
    try {
      process.env.TZ = "Europe/Berlin";
      // The same wall clock and label as Intl's pinned zone above.
      expect(formatTimestamp(T, "local")).toBe(formatTimestamp(T, "local", { pinnedZone: "Europe/Berlin" }));
      process.env.TZ = "America/New_York";
      expect(formatTimestamp(T, "local")).toBe("2025-01-31 09:05:09 GMT-5");
      process.env.TZ = "Pacific/Kiritimati";
      expect(formatCompact(T, "local", T)).toBe("04:05:09");
    } finally {
      process.env.TZ = saved;
    }
  });

  it("labels an offset the way en-US does for zones without a name", () => {
    expect(offsetLabel(0)).toBe("UTC");
    expect(offsetLabel(60)).toBe("GMT+1");
    expect(offsetLabel(-300)).toBe("GMT-5");
    expect(offsetLabel(330)).toBe("GMT+5:30");
    expect(offsetLabel(-570)).toBe("GMT-9:30");
  });

  it("ignores an invalid pinned zone", () => {
    expect(zoneFor("local", "Not/AZone")).toBeUndefined();
    expect(formatTimestamp(T, "local", { pinnedZone: "Not/AZone", zone: false })).toBe("2025-01-31 14:05:09");
  });

  it("utc ignores the pinned zone", () => {
    expect(formatTimestamp(T, "utc", { pinnedZone: "Asia/Tokyo" })).toBe("2025-01-31 14:05:09 UTC");
  });

  it("can omit the date, the zone, or add milliseconds", () => {
    expect(formatTimestamp(T, "utc", { date: false })).toBe("14:05:09 UTC");
    expect(formatTimestamp(T, "utc", { zone: false, millis: true })).toBe("2025-01-31 14:05:09.042");
    expect(formatClock(T, "local", "Asia/Tokyo")).toBe("23:05:09");
  });

  it("renders midnight as 00, not 24", () => {
    expect(formatTimestamp(Date.UTC(2025, 5, 1, 0, 0, 0), "utc", { zone: false })).toBe("2025-06-01 00:00:00");
  });

  it("returns a dash for missing or zero timestamps", () => {
    expect(formatTimestamp(undefined, "utc")).toBe("—");
    expect(formatTimestamp(0, "utc")).toBe("—");
    expect(formatTimestamp(0n, "utc")).toBe("—");
    expect(formatTimestamp(Number.NaN, "utc")).toBe("—");
    expect(toIso(0)).toBe("");
    expect(toIso(T)).toBe("2025-01-31T14:05:09.042Z");
  });
});

describe("formatCount", () => {
  it("groups thousands the way en-US does", () => {
    for (const n of [0, 7, 999, 1000, 1234, 99_999, 1_000_000, 1_234_567_890, -1234, -999, 1234.5, 0.25, Number.MAX_SAFE_INTEGER])
      expect(formatCount(n)).toBe(n.toLocaleString("en-US", { maximumFractionDigits: 20 }));
    expect(formatCount(Number.NaN)).toBe("NaN");
    expect(formatCount(1e21)).toBe("1e+21");
  });
});

describe("formatCompact", () => {
  it("shows the clock for today and the date for other days, in the chosen zone", () => {
    const now = Date.UTC(2025, 0, 31, 23, 0, 0);
    expect(formatCompact(T, "utc", now)).toBe("14:05:09");
    expect(formatCompact(T - 86_400_000, "utc", now)).toBe("01-30 14:05");
    // 23:00 UTC on Jan 31 is already Feb 1 in Tokyo, where T is Jan 31 23:05.
    expect(formatCompact(T, "local", now, "Asia/Tokyo")).toBe("01-31 23:05");
    expect(formatCompact(undefined, "utc", now)).toBe("—");
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [999, "0s"],
    [45_000, "45s"],
    [185_000, "3m 05s"],
    [7_380_000, "2h 03m"],
    [100_800_000, "1d 04h"],
    [-5_000, "5s"],
  ])("%d ms → %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
  it("handles non-finite input", () => {
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe("—");
  });
});

describe("ttlStatus", () => {
  const now = 1_000_000;
  it("counts down with seconds rounded up", () => {
    expect(ttlStatus(now + 90_500, now)).toEqual({ kind: "remaining", ms: 90_500, text: "1m 31s", urgent: false });
  });
  it("is urgent under a minute and reads 0s at the deadline", () => {
    expect(ttlStatus(now + 59_000, now)).toMatchObject({ kind: "remaining", urgent: true, text: "59s" });
    expect(ttlStatus(now, now)).toMatchObject({ kind: "remaining", text: "0s" });
  });
  it("is elapsed once past the deadline (now > deadline)", () => {
    expect(ttlStatus(now - 1, now)).toEqual({ kind: "elapsed", text: "elapsed" });
  });
  it("is unknown without a deadline", () => {
    expect(ttlStatus(0n, now).kind).toBe("unknown");
    expect(ttlStatus(undefined, now).kind).toBe("unknown");
  });
});

describe("formatRelative", () => {
  const now = Date.UTC(2025, 0, 1);
  it.each([
    [now - 500, "just now"],
    [now - 12_000, "12s ago"],
    [now - 5 * 60_000, "5m ago"],
    [now - 3 * 3_600_000, "3h ago"],
    [now - 2 * 86_400_000, "2d ago"],
    [now + 5_000, "in 5s"],
  ])("%d → %s", (ms, text) => {
    expect(formatRelative(ms, now)).toBe(text);
  });
  it("returns a dash when unknown", () => {
    expect(formatRelative(0, now)).toBe("—");
  });
});

describe("small formatters", () => {
  it("formats percentages clamped to 0..100", () => {
    expect(formatPercent(0.3)).toBe("30%");
    expect(formatPercent(0.704)).toBe("70%");
    expect(formatPercent(1.4)).toBe("100%");
    expect(formatPercent(-1)).toBe("0%");
    expect(formatPercent(undefined)).toBe("—");
  });
  it("formats byte sizes", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(2 * 1024 * 1024)).toBe("2.0 MB");
  });
  it("labels modes and phases", () => {
    expect(modeLabel("macp.mode.handoff.v1")).toBe("Handoff");
    expect(modeLabel("macp.mode.task.v1")).toBe("Task");
    expect(modeLabel("v0.1.file")).toBe("v0.1 file");
    expect(modeLabel("ext.multi_round.v1")).toBe("ext.multi_round.v1");
    expect(modeLabel("")).toBe("—");
    expect(humanizePhase("OfferPending")).toBe("Offer pending");
    expect(humanizePhase("InProgress")).toBe("In progress");
    expect(humanizePhase("Committed")).toBe("Committed");
  });
});

describe("formatAge", () => {
  it("is coarse: seconds, then minutes, then hours and minutes, then days and hours", () => {
    expect(formatAge(45_000)).toBe("45s");
    expect(formatAge(12 * 60_000 + 59_000)).toBe("12m");
    expect(formatAge(2 * 3_600_000 + 3 * 60_000)).toBe("2h 03m");
    expect(formatAge(3 * 86_400_000 + 4 * 3_600_000)).toBe("3d 04h");
    expect(formatAge(-5)).toBe("0s");
    expect(formatAge(NaN)).toBe("—");
  });
});
