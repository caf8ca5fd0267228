import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hookWants, loadWebhooks, parseWebhooks, webhooksFilePath } from "./config";

const parse = (doc: unknown, env: Record<string, string> = {}) => parseWebhooks(JSON.stringify(doc), "hooks.json", env);
const SECRET = "0123456789abcdef";

describe("webhooks file", () => {
  it("is found in the data folder unless BATON_WEBHOOKS_FILE says otherwise; absent = none", () => {
    expect(webhooksFilePath({ BATON_DATA_DIR: "/d" }, "/w")).toBe(path.join("/d", "webhooks.json"));
    expect(webhooksFilePath({ BATON_WEBHOOKS_FILE: "conf/h.json" }, "/w")).toBe(path.join("/w", "conf/h.json"));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hooks-"));
    expect(loadWebhooks({ BATON_DATA_DIR: dir }, dir).hooks).toEqual([]);
    fs.writeFileSync(path.join(dir, "webhooks.json"), "{");
    expect(() => loadWebhooks({ BATON_DATA_DIR: dir }, dir)).toThrow(/not valid JSON/);
    fs.rmSync(dir, { recursive: true });
  });

  it("reads generic and Slack hooks, a secret from the environment, filters", () => {
    const hooks = parse(
      {
        webhooks: [
          {
            id: "oncall",
            url: "https://h.example.com/x",
            secretEnv: "HOOK_SECRET",
            events: ["offer.waiting"],
            participants: ["human:alice"],
          },
          { id: "slack", url: "https://hooks.slack.com/services/T/B/X", format: "slack" },
        ],
      },
      { HOOK_SECRET: SECRET },
    );
    expect(hooks.map((h) => [h.id, h.format, h.secret])).toEqual([
      ["oncall", "generic", SECRET],
      ["slack", "slack", null],
    ]);
    const [oncall, slack] = hooks as [(typeof hooks)[0], (typeof hooks)[0]];
    expect(hookWants(oncall, "offer.waiting", ["human:alice", "human:bob"])).toBe(true);
    expect(hookWants(oncall, "offer.waiting", ["human:bob"])).toBe(false);
    expect(hookWants(oncall, "offer.declined", ["human:alice"])).toBe(false);
    expect(hookWants(slack, "task.reported", [])).toBe(true);
  });

  it.each([
    [{}, /"webhooks" array/],
    [{ webhooks: [{ id: "a b", url: "http://x", secret: SECRET }] }, /webhooks\[0\]\.id/],
    [{ webhooks: [{ id: "a", url: "ftp://x", secret: SECRET }] }, /webhook "a": url must be http/],
    [{ webhooks: [{ id: "a", url: "http://u:p@x", secret: SECRET }] }, /user name or password/],
    [{ webhooks: [{ id: "a", url: "http://x" }] }, /webhook "a": a generic webhook needs a secret/],
    [{ webhooks: [{ id: "a", url: "http://x", secret: "short" }] }, /secret must be a string of at least 16/],
    [{ webhooks: [{ id: "a", url: "http://x", secretEnv: "NOPE" }] }, /secretEnv names NOPE, which is not set/],
    [{ webhooks: [{ id: "a", url: "http://x", secret: SECRET, format: "teams" }] }, /format must be/],
    [{ webhooks: [{ id: "a", url: "http://x", secret: SECRET, events: ["offer.sent"] }] }, /unknown event "offer.sent"/],
    [{ webhooks: [{ id: "a", url: "http://x", secret: SECRET, participants: [] }] }, /participants must be/],
    [{ webhooks: [{ id: "a", url: "http://x", secret: SECRET, sekret: 1 }] }, /unknown field "sekret"/],
    [
      {
        webhooks: [
          { id: "a", url: "http://x", secret: SECRET },
          { id: "a", url: "http://y", secret: SECRET },
        ],
      },
      /used twice/,
    ],
  ])("refuses %j naming the field", (doc, message) => {
    expect(() => parse(doc)).toThrow(message);
  });
});
