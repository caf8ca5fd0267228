import { describe, expect, it } from "vitest";
import { addRefusal, MAX_REFUSAL_SESSIONS, MAX_REFUSALS_PER_SESSION, type LocalRefusal } from "@/lib/client/refusals";

const r = (sessionId: string, id: string): LocalRefusal => ({
  id,
  sessionId,
  atMs: 1,
  actor: "human:alice",
  attempt: "commit",
  code: "FORBIDDEN",
  explanation: "no",
  source: "console",
});

describe("local refusals", () => {
  it("keeps each refusal once, the newest per session, and the most recently used sessions", () => {
    let m = addRefusal(new Map(), r("s1", "a"));
    expect(addRefusal(m, r("s1", "a"))).toBe(m);
    for (let i = 0; i < MAX_REFUSALS_PER_SESSION + 5; i++) m = addRefusal(m, r("s1", `x${i}`));
    const s1 = m.get("s1") ?? [];
    expect(s1).toHaveLength(MAX_REFUSALS_PER_SESSION);
    expect(s1.at(-1)?.id).toBe(`x${MAX_REFUSALS_PER_SESSION + 4}`);
    for (let i = 0; i < MAX_REFUSAL_SESSIONS; i++) m = addRefusal(m, r(`t${i}`, "a"));
    expect(m.size).toBe(MAX_REFUSAL_SESSIONS);
    expect(m.has("s1")).toBe(false);
    expect(m.has(`t${MAX_REFUSAL_SESSIONS - 1}`)).toBe(true);
  });
});
