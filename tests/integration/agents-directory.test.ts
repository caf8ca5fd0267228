// The agents directory (BATON_AGENTS_FILE) in a running console: agents get
// their display names in ListDirectory (known even before a session names
// them), and a bad file stops the console at start, naming the line and field.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SessionKind } from "@/lib/gen/baton/v1/actions_pb";
import { signedIn, startTestConsole, uuid, type Person, type TestConsole } from "./actions-harness";

const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng" },
  { username: "victor", role: "viewer", name: "Victor Viewer" },
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-agents-it-"));
const consoles: TestConsole[] = [];
afterAll(async () => {
  for (const c of consoles) await c.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the agents directory", () => {
  it("names agents in the directory, seen or not yet", async () => {
    const file = path.join(dir, "agents.json");
    fs.writeFileSync(
      file,
      JSON.stringify({ "agent://oncall/pager-bot": "Pager bot", "agent://billing/worker-2": "Billing worker 2" }, null, 2),
    );
    const tc = await startTestConsole(PEOPLE, { BATON_AGENTS_FILE: file });
    consoles.push(tc);
    const alice = await signedIn(tc, "alice");
    const started = await alice.actions().startSession({
      messageId: uuid(),
      kind: SessionKind.HANDOFF,
      intent: "with a bot",
      participants: ["agent://oncall/pager-bot", "agent://unnamed"],
    });
    expect(started.ok).toBe(true);
    const victor = await signedIn(tc, "victor");
    let agents: { participantId: string; displayName: string }[] = [];
    for (let i = 0; i < 50; i++) {
      agents = (await victor.actions().listDirectory({})).agents;
      if (agents.some((a) => a.participantId === "agent://unnamed")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const byId = new Map(agents.map((a) => [a.participantId, a.displayName]));
    expect(byId.get("agent://oncall/pager-bot")).toBe("Pager bot");
    expect(byId.get("agent://billing/worker-2")).toBe("Billing worker 2");
    expect(byId.get("agent://unnamed")).toBe("");
  });

  it("refuses to start with a bad file, naming the file, the line and the field", async () => {
    const file = path.join(dir, "bad-agents.json");
    fs.writeFileSync(file, '{\n  "agent://a": "A",\n  "agent://b": ""\n}\n');
    await expect(startTestConsole(PEOPLE, { BATON_AGENTS_FILE: file })).rejects.toThrow(
      `${file} line 3, field "agent://b": the display name is empty`,
    );
    await expect(startTestConsole(PEOPLE, { BATON_AGENTS_FILE: path.join(dir, "missing.json") })).rejects.toThrow(
      /cannot read the agents file/,
    );
  });
});
