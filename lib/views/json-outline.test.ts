import { describe, expect, it } from "vitest";
import { boundedPrettyJson, outlineJson, type JsonBranch, type JsonLimits } from "@/lib/views/json-outline";

const LIMITS: JsonLimits = { maxNodes: 50, maxEntries: 10, maxDepth: 5, maxStringChars: 8 };

describe("outlineJson", () => {
  it("shows small documents whole, in order", () => {
    const o = outlineJson({ a: 1, b: [true, null, "x"], c: { d: "hi" } }, LIMITS);
    expect(o.truncated).toBe(false);
    expect(o.shown).toBe(8);
    const root = o.root as JsonBranch;
    expect(root.children.map((c) => c.name)).toEqual(["a", "b", "c"]);
    expect((root.children[1] as JsonBranch).children.map((c) => (c.kind === "leaf" ? c.text : "?"))).toEqual(["true", "null", '"x"']);
  });

  it("does not expand below maxDepth and never recurses: 100,000 levels are fine", () => {
    const text = `${"[".repeat(100_000)}1${"]".repeat(100_000)}`;
    const o = outlineJson(JSON.parse(text) as unknown, LIMITS);
    expect(o.tooDeep).toBe(true);
    expect(o.shown).toBe(6);
    let n = o.root as JsonBranch;
    for (let d = 0; d < 5; d++) n = n.children[0] as JsonBranch;
    expect(n).toMatchObject({ kind: "branch", tooDeep: true, size: 1, children: [] });
  });

  it("keeps to the node budget breadth first, counts what it leaves out, and clips strings and keys", () => {
    const wide = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`key-number-${i}`, Array.from({ length: 30 }, (_, j) => j)]));
    const o = outlineJson(wide, LIMITS);
    expect(o.shown).toBeLessThanOrEqual(LIMITS.maxNodes);
    const root = o.root as JsonBranch;
    expect(root.children).toHaveLength(10);
    expect(root.omitted).toBe(20);
    expect(root.children[0]?.name).toBe("key-numb…");
    // The top level first: every shown branch's first entries before deeper ones.
    expect((root.children[0] as JsonBranch).children).toHaveLength(10);
    expect((root.children[9] as JsonBranch).children.length).toBeLessThan(10);
    const s = outlineJson("a".repeat(100) + "😀", { ...LIMITS, maxStringChars: 101 });
    expect(s.root).toMatchObject({ kind: "leaf", type: "string", text: JSON.stringify("a".repeat(100)), clipped: 2 });
  });
});

describe("boundedPrettyJson", () => {
  it("matches JSON.stringify(v, null, 2) within its bounds", () => {
    for (const v of [{}, [], { a: [1, 2, { b: null }], 'c"d': "e\n" }, [[[]]], "s", 1.5, null, true, { x: { y: { z: [1] } } }]) {
      expect(boundedPrettyJson(v, { maxChars: 10_000, maxDepth: 10 })).toEqual({ text: JSON.stringify(v, null, 2), truncated: false });
    }
  });

  it("prints deep levels as an ellipsis and stops at the character budget, without recursion", () => {
    const deep = JSON.parse(`${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`) as unknown;
    const out = boundedPrettyJson(deep, { maxChars: 100_000, maxDepth: 3 });
    expect(out.truncated).toBe(true);
    expect(out.text).toContain("{… 1 key nested too deep}");
    expect(out.text.length).toBeLessThan(500);
    const wide = Array.from({ length: 100_000 }, (_, i) => i);
    const cut = boundedPrettyJson(wide, { maxChars: 1_000, maxDepth: 3 });
    expect(cut.truncated).toBe(true);
    expect(cut.text.length).toBeLessThan(1_100);
    expect(cut.text).toMatch(/download the raw payload/);
  });
});
