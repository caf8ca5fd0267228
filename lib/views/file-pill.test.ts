import { describe, expect, it } from "vitest";
import { fileFromLabel, fileRowHref, fileRowPill, fileToLabel } from "@/lib/views/file-pill";

describe("file rows of the session list", () => {
  it("pill: the v0.1 status, or Invalid with the reason in its hint, or Removed", () => {
    expect(fileRowPill({ present: true, valid: true, status: "accepted", problem: "" }).label).toBe("Accepted");
    const invalid = fileRowPill({ present: true, valid: false, status: "", problem: "not valid JSON (Unexpected end)" });
    expect(invalid.label).toBe("Invalid");
    expect(invalid.hint).toBe("Not a valid v0.1 handoff: not valid JSON (Unexpected end)");
    expect(fileRowPill({ present: false, valid: true, status: "offered", problem: "" }).label).toBe("Removed");
  });

  it("links to the file's page by file name (an invalid file's name need not be a task_id)", () => {
    expect(fileRowHref({ dirKey: "0123456789ab", name: "3f2a.json" })).toBe("/files/0123456789ab/3f2a");
    expect(fileRowHref({ dirKey: "0123456789ab", name: "broken #1.json" })).toBe("/files/0123456789ab/broken%20%231");
  });

  it("from and to: people by name, agents by id, an empty to_agent of a valid offer as anyone", () => {
    expect(fileFromLabel({ fromAgent: "human:alice", fromName: "Alice Park" })).toBe("Alice Park");
    expect(fileFromLabel({ fromAgent: "agent://planner", fromName: "" })).toBe("agent://planner");
    expect(fileToLabel({ toAgent: "", toName: "", valid: true, status: "offered" })).toBe("anyone");
    expect(fileToLabel({ toAgent: "human:bob", toName: "Bob Ito", valid: true, status: "accepted" })).toBe("Bob Ito");
    expect(fileToLabel({ toAgent: "", toName: "", valid: false, status: "" })).toBe("");
  });
});
