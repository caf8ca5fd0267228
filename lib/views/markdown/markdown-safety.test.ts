import { describe, expect, it } from "vitest";
import { MAX_DEPTH, parseMarkdown, safeHref, type MdBlock, type MdInline } from "@/lib/views/markdown";
import { depthOf, md, one, walk } from "./__fixtures__/markdown-kit";

describe("safety", () => {
  it("keeps raw HTML as literal text, never as elements", () => {
    const src =
      '<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\nInline <b onclick="x()">bold</b> and <iframe src="javascript:alert(1)"></iframe>';
    const blocks = parseMarkdown(src);
    expect(blocks).toEqual([
      { type: "paragraph", children: [{ type: "text", text: "<script>alert(1)</script>" }] },
      { type: "paragraph", children: [{ type: "text", text: "<img src=x onerror=alert(1)>" }] },
      {
        type: "paragraph",
        children: [{ type: "text", text: 'Inline <b onclick="x()">bold</b> and <iframe src="javascript:alert(1)"></iframe>' }],
      },
    ]);
    expect(md("<div>\n*still markdown*\n</div>")).toBe("<p>&lt;div&gt;\n<em>still markdown</em>\n&lt;/div&gt;</p>");
  });

  it("drops unsafe link targets, keeping the link text as plain text", () => {
    expect(
      one("[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,<b>) [w](vbscript:msgbox) [v](file:///etc/passwd)"),
    ).toBe("x y z w v");
    expect(one("<javascript:alert(1)> <data:text/html,x>")).toBe("&lt;javascript:alert(1)&gt; &lt;data:text/html,x&gt;");
    expect(one("[e](<java\tscript:alert(1)>) [f](java&#58;script:x) [g](//evil.example)")).toBe("e f g");
    const links = walk(parseMarkdown("[a](javascript:x) ![b](data:x) <vbscript:x> [c]: javascript:y\n\n[c]")).filter(
      (n) => n.type === "link",
    );
    expect(links).toEqual([]);
  });

  it("safeHref allows only http(s), mailto, fragments and explicit relative paths", () => {
    for (const ok of [
      "https://a.example/x",
      "http://a.example",
      "HTTPS://A.EXAMPLE",
      "mailto:a@b.example",
      "#frag",
      "/path?q=1",
      "./rel",
      "../up",
      "  https://trim.example  ",
    ]) {
      expect(safeHref(ok), ok).toBe(ok.trim());
    }
    for (const bad of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      " javascript:alert(1)",
      "java\tscript:alert(1)",
      "java\nscript:alert(1)",
      "java\u0000script:alert(1)",
      "\u0001javascript:alert(1)",
      "javascript\u0085:alert(1)",
      "data:text/html;base64,PHNjcmlwdD4=",
      "vbscript:msgbox(1)",
      "file:///etc/passwd",
      "ftp://a.example",
      "chrome://settings",
      "//evil.example",
      "/\\evil.example",
      "relative/path",
      "page.html",
      ":nothing",
      "",
      "   ",
    ]) {
      expect(safeHref(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});

describe("limits", () => {
  it(`caps container nesting at ${MAX_DEPTH} levels and keeps the rest as text`, () => {
    const quotes = parseMarkdown("> ".repeat(40) + "deep");
    expect(depthOf(quotes[0] as MdBlock)).toBe(MAX_DEPTH);
    const texts = walk(quotes).filter((n): n is Extract<MdInline, { type: "text" }> => n.type === "text");
    expect(texts.map((t) => t.text).join("")).toContain("deep");

    const lists = parseMarkdown(Array.from({ length: 40 }, (_, i) => "  ".repeat(i) + "- level " + i).join("\n"));
    expect(depthOf(lists[0] as MdBlock)).toBe(MAX_DEPTH);
    expect(JSON.stringify(lists)).toContain("level 39");
  });

  it("caps inline nesting and keeps deeper markers as text", () => {
    const blocks = parseMarkdown("*a ".repeat(60) + "b" + " a*".repeat(60));
    const inlineDepth = (ns: MdInline[]): number => Math.max(0, ...ns.map((n) => ("children" in n ? 1 + inlineDepth(n.children) : 0)));
    const p = blocks[0];
    if (p?.type !== "paragraph") throw new Error("no paragraph");
    expect(inlineDepth(p.children)).toBeLessThanOrEqual(16);
    expect(JSON.stringify(p)).toContain("b");
  });

  // No timing asserts: these must simply finish (the test timeout is the guard).
  const N = 200_000;
  const hostile: Record<string, string> = {
    stars: "*".repeat(N),
    "star words": "*a ".repeat(N / 3),
    "mixed emphasis": "*a _b **c __d ".repeat(N / 14),
    "nested emphasis": "*".repeat(N / 2) + "a" + "*".repeat(N / 2),
    "open brackets": "[".repeat(N),
    "close brackets": "]".repeat(N),
    "nested brackets with a definition": "[x]: /u\n\n" + "[".repeat(N / 2) + "x" + "]".repeat(N / 2),
    "link openers": "[](".repeat(N / 3),
    "unbalanced destinations": "[](" + "[]()".repeat(N / 4),
    "unclosed titles": '[](a "'.repeat(N / 6),
    "image openers": "![".repeat(N / 2),
    backticks: "`".repeat(N),
    "backtick runs": "` `` ``` ".repeat(N / 9),
    "angle brackets": "<".repeat(N),
    "angle schemes": "<http:".repeat(N / 6),
    ampersands: "&".repeat(N),
    "bare autolink starts": "(www.(".repeat(N / 6),
    "autolink with punctuation": " http://a.example" + "!".repeat(N),
    backslashes: "\\".repeat(N),
    "quote markers": ">".repeat(N),
    "quote lines": "> a\n".repeat(N / 4),
    "list markers": "1. ".repeat(N / 3),
    "bullet markers": "- * + ".repeat(N / 6),
    pipes: "|".repeat(N) + "\n" + "|-".repeat(N / 2),
    "table rows": "|a|b|\n|-|-|\n" + "|x|y|\n".repeat(N / 6),
    lines: "a\n".repeat(N / 2),
    "long spaces": "a" + " ".repeat(N) + "b\n" + " ".repeat(N) + "c",
    "heading spaces": "# a" + " ".repeat(N) + "b #",
    fences: "```\n".repeat(N / 4),
    "reference definitions": "[a]: /u\n".repeat(N / 8) + "[a]",
    noise: Array.from({ length: N }, (_, i) => "*_[]()`<>!~\\\n &#|-h"[(i * 7919) % 20]).join(""),
  };
  for (const [name, src] of Object.entries(hostile)) {
    it(`terminates on ${name}`, () => {
      const blocks = parseMarkdown(src);
      expect(Array.isArray(blocks)).toBe(true);
      expect(JSON.stringify(blocks).length).toBeGreaterThan(0);
    });
  }
});
