import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, logFormat, LogFormatError } from "./create-logger";

function capture(isTTY: boolean): { stream: PassThrough & { isTTY?: boolean }; text: () => string } {
  const stream: PassThrough & { isTTY?: boolean } = new PassThrough();
  stream.isTTY = isTTY;
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}

describe("logFormat", () => {
  it("is pretty on a terminal and JSON otherwise, unless told", () => {
    expect(logFormat({}, true)).toBe("pretty");
    expect(logFormat({}, false)).toBe("json");
    expect(logFormat({ BATON_LOG_FORMAT: "json" }, true)).toBe("json");
    expect(logFormat({ BATON_LOG_FORMAT: "Pretty" }, false)).toBe("pretty");
    expect(logFormat({ BATON_LOG_FORMAT: "auto" }, true)).toBe("pretty");
  });
  it("refuses an unknown format with the variable's name", () => {
    expect(() => logFormat({ BATON_LOG_FORMAT: "xml" }, true)).toThrow(LogFormatError);
    expect(() => logFormat({ BATON_LOG_FORMAT: "xml" }, true)).toThrow(/BATON_LOG_FORMAT/);
  });
});

describe("createLogger", () => {
  it("writes one JSON object per line when the output is not a terminal", () => {
    const out = capture(false);
    const log = createLogger({ level: "info", base: { component: "test" }, env: {}, destination: out.stream });
    log.info({ sessionId: "s1" }, "hello");
    log.debug("hidden below the level");
    const lines = out.text().trim().split("\n");
    expect(lines).toHaveLength(1);
    const rec = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(rec).toMatchObject({ level: 30, msg: "hello", sessionId: "s1", component: "test" });
  });
  it("writes readable lines on a terminal", () => {
    const out = capture(true);
    const log = createLogger({ level: "info", base: { component: "test" }, env: { BATON_LOG_FORMAT: "pretty" }, destination: out.stream });
    log.warn({ sessionId: "s1" }, "disk nearly full");
    const text = out.text().replace(/\u001b\[[0-9;]*m/g, "");
    expect(text).toMatch(/WARN/);
    expect(text).toMatch(/disk nearly full/);
    expect(text).toMatch(/sessionId/);
    expect(() => JSON.parse(text)).toThrow();
  });
});
