import { describe, expect, it } from "vitest";
import { ACTIONS, decide, decideAll } from "@/lib/authz/decide";
import { ROLES, roleAtLeast } from "@/lib/authz/roles";
import { ALICE, ANY_PARTICIPANT, BOB, CAROL, HANDOFF, NOW, ROOT, TASK, VIC } from "./__fixtures__/decide-kit";

describe("decide: properties", () => {
  const scenarios = [...Object.values(HANDOFF), ...Object.values(TASK)];
  it("a higher role never loses a right a lower role has (same participant)", () => {
    for (const s of scenarios) {
      for (const pid of [ALICE, BOB, CAROL, VIC, ROOT]) {
        for (const action of ACTIONS) {
          for (const lower of ROLES) {
            if (!decide({ role: lower, participantId: pid }, s.view, action, { now: NOW, ...s.ctx }).allowed) continue;
            for (const higher of ROLES.filter((r) => roleAtLeast(r, lower))) {
              expect(decide({ role: higher, participantId: pid }, s.view, action, { now: NOW, ...s.ctx }).allowed).toBe(true);
            }
          }
        }
      }
    }
  });

  it("viewers can only view", () => {
    for (const s of scenarios) {
      const all = decideAll({ role: "viewer", participantId: BOB }, s.view, { now: NOW, ...s.ctx });
      expect(ACTIONS.filter((a) => all[a].allowed)).toEqual(["view"]);
    }
  });

  it("only the session's protocol authority may commit, whatever the role", () => {
    for (const s of scenarios) {
      for (const pid of [BOB, VIC, ROOT]) {
        // bob, vic and root are never the initiator nor designated in these scenarios,
        // except under any_participant where bob and vic are participants.
        const d = decide({ role: "admin", participantId: pid }, s.view, "commit", { now: NOW, ...s.ctx });
        if (d.allowed) expect(s.ctx?.policy).toBe(ANY_PARTICIPANT);
      }
    }
  });
});

describe("lib/authz stays browser-safe", () => {
  it("imports nothing from Node or from server-side folders (lib/base imports nothing at all)", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const dir = new URL(".", import.meta.url);
    const files = (await readdir(dir)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = await readFile(new URL(f, dir), "utf8");
      const imports = [...text.matchAll(/from "([^"]+)"/g)].map((m) => m[1] as string);
      for (const spec of imports) {
        expect(spec, `${f} imports ${spec}`).toMatch(
          /^(@\/lib\/base\/|@\/lib\/macp\/|@\/lib\/authz\/|@\/lib\/handoff-files\/transitions$|\.\/)/,
        );
      }
    }
    // The v0.1 state machine's table is shared with lib/handoff-files, and stays free of imports but types.
    const table = await readFile(new URL("../handoff-files/transitions.ts", dir), "utf8");
    for (const line of table.split("\n").filter((l) => /^import /.test(l) || /^export .* from /.test(l)))
      expect(line).toMatch(/^(import|export) type /);
  });
});
