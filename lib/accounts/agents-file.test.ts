import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentsFilePath, AgentsFileError, loadAgentNames, parseAgentsFile } from "./agents-file";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "baton-agents-"));
  dirs.push(d);
  return d;
}

describe("parseAgentsFile", () => {
  it("maps agent ids to trimmed display names", () => {
    const names = parseAgentsFile('{\n  "agent://oncall/pager-bot": " Pager bot ",\n  "agent:billing": "Billing"\n}\n', "agents.json");
    expect([...names]).toEqual([
      ["agent://oncall/pager-bot", "Pager bot"],
      ["agent:billing", "Billing"],
    ]);
  });

  it("names the line and the field of a bad entry", () => {
    const bad = (text: string) => () => parseAgentsFile(text, "agents.json");
    expect(bad('{\n  "agent://a": "A",\n  "agent://b": 7\n}')).toThrow(
      /^agents\.json line 3, field "agent:\/\/b": the display name must be a string, got number$/,
    );
    expect(bad('{\n  "agent://a": ""\n}')).toThrow(/line 2, field "agent:\/\/a": the display name is empty/);
    expect(bad('{\n\n  "two words": "x"\n}')).toThrow(/line 3, field "two words": not a participant id/);
    expect(bad('{ "human:alice": "Alice" }')).toThrow(/people's names come from the accounts/);
    expect(bad(`{ "agent://a": "${"x".repeat(81)}" }`)).toThrow(/longer than 80 characters/);
    expect(bad('{ "agent://a": "tab\\there" }')).toThrow(/control characters/);
    expect(bad('{ "agent://a": null }')).toThrow(/got null/);
  });

  it("names the line of a JSON syntax error, and refuses anything but an object", () => {
    expect(() => parseAgentsFile('{\n  "agent://a": "A",\n  "agent://b" "B"\n}', "agents.json")).toThrow(
      /^agents\.json line 3.*not valid JSON/,
    );
    expect(() => parseAgentsFile('["agent://a"]', "agents.json")).toThrow(/must be a JSON object/);
    expect(() => parseAgentsFile("null", "agents.json")).toThrow(AgentsFileError);
  });
});

describe("loadAgentNames", () => {
  it("reads agents.json in the data folder; none there is no names", () => {
    const dir = tmp();
    const env = { BATON_DATA_DIR: path.join(dir, "data") };
    expect(agentsFilePath(env, dir)).toEqual({ file: path.join(dir, "data", "agents.json"), explicit: false });
    expect(loadAgentNames(env, dir).names.size).toBe(0);
    fs.mkdirSync(path.join(dir, "data"));
    fs.writeFileSync(path.join(dir, "data", "agents.json"), '{ "agent://x": "X" }');
    expect(loadAgentNames(env, dir).names.get("agent://x")).toBe("X");
  });

  it("a file named by BATON_AGENTS_FILE must exist", () => {
    const dir = tmp();
    expect(() => loadAgentNames({ BATON_AGENTS_FILE: "missing.json" }, dir)).toThrow(
      /cannot read the agents file .*missing\.json \(BATON_AGENTS_FILE\)/,
    );
    fs.writeFileSync(path.join(dir, "names.json"), '{ "agent://y": "Y" }');
    expect(loadAgentNames({ BATON_AGENTS_FILE: "names.json" }, dir).names.get("agent://y")).toBe("Y");
  });
});
