import { describe, expect, it } from "vitest";
import { parseMarkdown } from "@/lib/views/markdown";
import { md, one, ser } from "./__fixtures__/markdown-kit";

describe("parseMarkdown: the runbook shape", () => {
  const RUNBOOK = `## payments-api: step 3

- check the **error budget** on \`payments-api\` (p99 < 203 ms)
- runbook: [payments-api on-call](https://runbooks.example.com/payments-api#step-3)
- page the secondary if the burn rate stays above 2× for 10 min

| signal | threshold |
| --- | --- |
| 5xx rate | 0.8% |
| queue depth | 103 |
`;

  it("is a heading, a tight list of paragraphs with strong, code and a link, and a table", () => {
    const blocks = parseMarkdown(RUNBOOK);
    expect(blocks.map((b) => b.type)).toEqual(["heading", "list", "table"]);
    expect(blocks[0]).toEqual({ type: "heading", level: 2, children: [{ type: "text", text: "payments-api: step 3" }] });
    const list = blocks[1];
    if (list?.type !== "list") throw new Error("no list");
    expect(list).toMatchObject({ ordered: false, start: null, tight: true });
    expect(list.items).toHaveLength(3);
    expect(list.items.every((i) => i.checked === null && i.children.length === 1 && i.children[0]?.type === "paragraph")).toBe(true);
    expect(list.items[0]?.children[0]).toEqual({
      type: "paragraph",
      children: [
        { type: "text", text: "check the " },
        { type: "strong", children: [{ type: "text", text: "error budget" }] },
        { type: "text", text: " on " },
        { type: "code", text: "payments-api" },
        { type: "text", text: " (p99 < 203 ms)" },
      ],
    });
    expect(list.items[1]?.children[0]).toEqual({
      type: "paragraph",
      children: [
        { type: "text", text: "runbook: " },
        {
          type: "link",
          href: "https://runbooks.example.com/payments-api#step-3",
          title: null,
          children: [{ type: "text", text: "payments-api on-call" }],
        },
      ],
    });
    expect(blocks[2]).toEqual({
      type: "table",
      align: [null, null],
      head: [[{ type: "text", text: "signal" }], [{ type: "text", text: "threshold" }]],
      rows: [
        [[{ type: "text", text: "5xx rate" }], [{ type: "text", text: "0.8%" }]],
        [[{ type: "text", text: "queue depth" }], [{ type: "text", text: "103" }]],
      ],
    });
  });

  it("keeps a closing paragraph after the table as its own block", () => {
    expect(parseMarkdown(RUNBOOK + "\nEscalate to #payments if unsure.\n").map((b) => b.type)).toEqual([
      "heading",
      "list",
      "table",
      "paragraph",
    ]);
  });

  it("parses the end-to-end suite's runbook with nested lists and an image", () => {
    const src = `# Payments on-call runbook

## Before you accept

- Check the pager app
- Confirm dashboard access
  - payments-api
  - settlement

1. Read the open incidents
2. Ask about anything unclear

See [the wiki](https://wiki.example.com/payments) and ![diagram](https://example.com/diagram.png).
`;
    expect(md(src)).toBe(
      [
        "<h1>Payments on-call runbook</h1>",
        "<h2>Before you accept</h2>",
        "<ul><li>Check the pager app</li><li>Confirm dashboard access\n<ul><li>payments-api</li><li>settlement</li></ul></li></ul>",
        "<ol><li>Read the open incidents</li><li>Ask about anything unclear</li></ol>",
        '<p>See <a href=https://wiki.example.com/payments>the wiki</a> and <img src=https://example.com/diagram.png alt="diagram">.</p>',
      ].join("\n"),
    );
  });
});

describe("parseMarkdown: blocks", () => {
  it("returns [] for empty and blank input", () => {
    expect(parseMarkdown("")).toEqual([]);
    expect(parseMarkdown("   \n\n\t\n")).toEqual([]);
  });

  it("parses ATX headings with optional closing hashes", () => {
    expect(md("# one\n## two ##\n### three ###   \n#### four #5\n##### five\n###### six\n####### seven")).toBe(
      "<h1>one</h1>\n<h2>two</h2>\n<h3>three</h3>\n<h4>four #5</h4>\n<h5>five</h5>\n<h6>six</h6>\n<p>####### seven</p>",
    );
    expect(md("#no space")).toBe("<p>#no space</p>");
    expect(md("#")).toBe("<h1></h1>");
    expect(md("### escaped \\#")).toBe("<h3>escaped #</h3>");
    expect(md("   # three spaces\n    # four is code")).toBe("<h1>three spaces</h1>\n<pre># four is code</pre>");
  });

  it("parses setext headings", () => {
    expect(md("Title\n=====\n\nSub\ntitle\n---")).toBe("<h1>Title</h1>\n<h2>Sub\ntitle</h2>");
  });

  it("parses paragraphs, keeping soft breaks and making hard ones", () => {
    expect(md("one\ntwo\n\nthree")).toBe("<p>one\ntwo</p>\n<p>three</p>");
    expect(md("a  \nb\\\nc\n   d   ")).toBe("<p>a<br>b<br>c\nd</p>");
    expect(md("trailing two spaces at the end  ")).toBe("<p>trailing two spaces at the end</p>");
  });

  it("parses thematic breaks", () => {
    expect(md("***\n---\n___\n * * *\n-  -  -")).toBe("<hr>\n<hr>\n<hr>\n<hr>\n<hr>");
    expect(md("--\n\n**")).toBe("<p>--</p>\n<p>**</p>");
    expect(md("para\n***\nafter")).toBe("<p>para</p>\n<hr>\n<p>after</p>");
  });

  it("parses fenced code blocks with an info string", () => {
    const blocks = parseMarkdown("```ts title=x\nconst a = '<b>';\n\n  indented\n```\n~~~\n``` not a close\n~~~~\n");
    expect(blocks).toEqual([
      { type: "code", lang: "ts", text: "const a = '<b>';\n\n  indented" },
      { type: "code", lang: null, text: "``` not a close" },
    ]);
    expect(md("  ```\n  two\n   three\n one\n  ```")).toBe("<pre>two\n three\none</pre>");
    expect(md("```\nunclosed\n\n# not a heading")).toBe("<pre>unclosed\n\n# not a heading</pre>");
    expect(md("``` a`b\n")).toBe("<p>``` a`b</p>");
    expect(md("````\n```\n````")).toBe("<pre>```</pre>");
  });

  it("parses indented code blocks", () => {
    expect(md("    line 1\n\n      line 2\n\n\npara")).toBe("<pre>line 1\n\n  line 2</pre>\n<p>para</p>");
    expect(md("para\n    not code")).toBe("<p>para\nnot code</p>");
    expect(md("\tcode with tab")).toBe("<pre>code with tab</pre>");
  });

  it("parses blockquotes with nested blocks and lazy continuation", () => {
    expect(md("> # Title\n> text\nlazy\n>\n> - item\n> > nested\n\nout")).toBe(
      "<blockquote><h1>Title</h1>\n<p>text\nlazy</p>\n<ul><li>item</li></ul>\n<blockquote><p>nested</p></blockquote></blockquote>\n<p>out</p>",
    );
    expect(md(">no space\n>    code")).toBe("<blockquote><p>no space\ncode</p></blockquote>");
    expect(md("> ```\n> code\nnot lazy")).toBe("<blockquote><pre>code</pre></blockquote>\n<p>not lazy</p>");
    expect(md("> a\n- b")).toBe("<blockquote><p>a</p></blockquote>\n<ul><li>b</li></ul>");
  });

  it("parses bullet lists with each marker, and starts a new list when the marker changes", () => {
    expect(md("- a\n- b\n* c\n+ d\n+ e")).toBe("<ul><li>a</li><li>b</li></ul>\n<ul><li>c</li></ul>\n<ul><li>d</li><li>e</li></ul>");
  });

  it("parses ordered lists with a start number and either delimiter", () => {
    const blocks = parseMarkdown("3. three\n4. four\n\n1) one");
    expect(blocks).toMatchObject([
      { type: "list", ordered: true, start: 3, tight: true },
      { type: "list", ordered: true, start: 1 },
    ]);
    expect(md("3. three\n4. four")).toBe("<ol start=3><li>three</li><li>four</li></ol>");
    expect(md("1234567890. too long")).toBe("<p>1234567890. too long</p>");
  });

  it("nests lists by indentation", () => {
    expect(md("- a\n  - b\n    - c\n  - d\n- e")).toBe("<ul><li>a\n<ul><li>b\n<ul><li>c</li></ul></li><li>d</li></ul></li><li>e</li></ul>");
    expect(md("1. a\n   - b\n2. c")).toBe("<ol><li>a\n<ul><li>b</li></ul></li><li>c</li></ol>");
    // Not indented to the content column: a sibling, not a child.
    expect(md("- a\n - b")).toBe("<ul><li>a</li><li>b</li></ul>");
  });

  it("keeps multiple paragraphs and code in one item, and marks the list loose", () => {
    const blocks = parseMarkdown("- first\n\n  second para\n\n      code\n- next\n  lazy\ncontinued");
    expect(blocks[0]).toMatchObject({ type: "list", tight: false });
    expect(ser(blocks)).toBe("<ul><li><p>first</p>\n<p>second para</p>\n<pre>code</pre></li><li><p>next\nlazy\ncontinued</p></li></ul>");
    expect(parseMarkdown("- a\n\n- b")[0]).toMatchObject({ type: "list", tight: false });
    expect(parseMarkdown("- a\n  - b\n\n  - c")[0]).toMatchObject({ type: "list", tight: true });
    expect(md("- ```\n  fenced\n  ```\n- x")).toBe("<ul><li><pre>fenced</pre></li><li>x</li></ul>");
  });

  it("only lets a list interrupt a paragraph when it is not empty and starts at 1", () => {
    expect(md("text\n- item")).toBe("<p>text</p>\n<ul><li>item</li></ul>");
    expect(md("text\n2. no\n*\nstill")).toBe("<p>text\n2. no\n*\nstill</p>");
    // A lone "-" under a paragraph is a setext underline, not an empty item.
    expect(md("text\n-")).toBe("<h2>text</h2>");
    expect(md("text\n1. yes")).toBe("<p>text</p>\n<ol><li>yes</li></ol>");
  });

  it("handles empty list items", () => {
    expect(md("-\n- b\n-\n\n  not in item")).toBe("<ul><li></li><li>b</li><li></li></ul>\n<p>not in item</p>");
  });

  it("parses GFM task list items", () => {
    const [list] = parseMarkdown("- [ ] todo\n- [x] done\n- [X] also done\n- [] no\n- [ ]\n- [y] no\n- plain");
    if (list?.type !== "list") throw new Error("no list");
    expect(list.items.map((i) => i.checked)).toEqual([false, true, true, null, null, null, null]);
    expect(ser([list])).toBe(
      "<ul><li>[ ] todo</li><li>[x] done</li><li>[x] also done</li><li>[] no</li><li>[ ]</li><li>[y] no</li><li>plain</li></ul>",
    );
    expect(md("1. [x] ordered task")).toBe("<ol><li>[x] ordered task</li></ol>");
    expect(md("- [ ] **bold** task\n\n  more")).toBe("<ul><li>[ ] <p><strong>bold</strong> task</p>\n<p>more</p></li></ul>");
  });

  it("parses GFM tables with alignment, escaped pipes and inline content", () => {
    const blocks = parseMarkdown(
      "| left | right | center | none |\n|:--|--:|:-:|---|\n| *a* | `x \\| y` | [l](https://l.example) | a \\| b |\n| short |\n| 1 | 2 | 3 | 4 | extra |",
    );
    expect(blocks[0]).toMatchObject({ type: "table", align: ["left", "right", "center", null] });
    expect(ser(blocks)).toBe(
      "<table><tr><th left>left</th><th right>right</th><th center>center</th><th>none</th></tr>" +
        "<tr><td left><em>a</em></td><td right><code>x | y</code></td><td center><a href=https://l.example>l</a></td><td>a | b</td></tr>" +
        "<tr><td left>short</td><td right></td><td center></td><td></td></tr>" +
        "<tr><td left>1</td><td right>2</td><td center>3</td><td>4</td></tr></table>",
    );
  });

  it("accepts tables without outer pipes, after a paragraph, and ends them at a blank line or block", () => {
    expect(md("a | b\n--|--\n1 | 2")).toBe("<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>");
    expect(md("intro\n| a |\n| - |\n| 1 |\n\nafter\n| b |\n|---|\n# next")).toBe(
      "<p>intro</p>\n<table><tr><th>a</th></tr><tr><td>1</td></tr></table>\n<p>after</p>\n<table><tr><th>b</th></tr></table>\n<h1>next</h1>",
    );
  });

  it("does not make a table when the delimiter row does not match the header", () => {
    expect(md("| a | b |\n| - |\n| 1 | 2 |")).toBe("<p>| a | b |\n| - |\n| 1 | 2 |</p>");
    expect(md("| a |\n| x |")).toBe("<p>| a |\n| x |</p>");
  });

  it("parses tables inside lists and blockquotes", () => {
    expect(md("> | a |\n> |:-:|\n> | 1 |")).toBe(
      "<blockquote><table><tr><th center>a</th></tr><tr><td center>1</td></tr></table></blockquote>",
    );
    expect(md("- item\n\n  | a |\n  | - |")).toBe("<ul><li><p>item</p>\n<table><tr><th>a</th></tr></table></li></ul>");
  });

  it("handles CRLF line endings and NUL characters", () => {
    expect(md("# a\r\n\r\nb\rc")).toBe("<h1>a</h1>\n<p>b\nc</p>");
    expect(one("a\u0000b")).toBe("a\uFFFDb");
  });
});
