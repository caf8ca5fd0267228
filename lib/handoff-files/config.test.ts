// Configuration from the environment: directories, data folder, limits.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliHandoffDir, dataDirFromEnv, handoffDirsFromEnv, handoffSettingsFromEnv, historyFileFromEnv } from "./config";

describe("handoff configuration", () => {
  it("reads BATON_HANDOFF_DIRS as comma- or colon-separated paths (none by default)", () => {
    expect(handoffDirsFromEnv({})).toEqual([]);
    expect(handoffDirsFromEnv({ BATON_HANDOFF_DIRS: " /a , b:/a\n/c " }, "/w")).toEqual(["/a", "/w/b", "/c"]);
  });

  it("resolves the CLI directory (--dir, HANDOFF_DIR, .handoffs) and the data folder (BATON_DATA_DIR, ./data)", () => {
    expect(cliHandoffDir(undefined, {}, "/w")).toBe("/w/.handoffs");
    expect(cliHandoffDir(undefined, { HANDOFF_DIR: "shared" }, "/w")).toBe("/w/shared");
    expect(cliHandoffDir("/x", { HANDOFF_DIR: "shared" }, "/w")).toBe("/x");
    expect(dataDirFromEnv({}, "/w")).toBe("/w/data");
    expect(historyFileFromEnv({ BATON_DATA_DIR: "/var/lib/baton" })).toBe(path.join("/var/lib/baton", "handoff-files.sqlite"));
  });

  it("validates limits and the watch mode, naming the variable", () => {
    expect(handoffSettingsFromEnv({})).toEqual({
      maxBytes: 1_048_576,
      maxFiles: 10_000,
      lockStaleMs: 10_000,
      watchMode: "auto",
      pollMs: 500,
    });
    expect(handoffSettingsFromEnv({ BATON_HANDOFF_WATCH: "POLL", BATON_HANDOFF_POLL_MS: "250" })).toMatchObject({
      watchMode: "poll",
      pollMs: 250,
    });
    expect(() => handoffSettingsFromEnv({ BATON_HANDOFF_WATCH: "inotify" })).toThrow(/BATON_HANDOFF_WATCH must be auto, watch or poll/);
    expect(() => handoffSettingsFromEnv({ BATON_HANDOFF_MAX_BYTES: "1mb" })).toThrow(/BATON_HANDOFF_MAX_BYTES must be a whole number/);
    expect(() => handoffSettingsFromEnv({ BATON_HANDOFF_MAX_FILES: "0" })).toThrow(/BATON_HANDOFF_MAX_FILES must be between 1 and/);
  });
});
