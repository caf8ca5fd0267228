import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MarkdownView } from "@/features/session/Markdown";
import { MAX_DEPTH, parseMarkdown, safeHref, type MdBlock, type MdInline } from "@/lib/views/markdown";

// A compact, HTML-like rendering of the tree, so expectations stay readable.
// (Test-only: the app renders the tree with React in features/session/Markdown.tsx.)
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
function inl(nodes: MdInline[]): string {
  return nodes
    .map((n) => {
      switch (n.type) {
        case "text":
          return esc(n.text);
        case "code":
          return `<code>${esc(n.text)}</code>`;
        case "break":
          return "<br>";
        case "image":
          return `<img src=${n.src ?? "NULL"} alt=${JSON.stringify(n.alt)}${n.title ? ` title=${JSON.stringify(n.title)}` : ""}>`;
        case "link":
          return `<a href=${n.href}${n.title ? ` title=${JSON.stringify(n.title)}` : ""}>${inl(n.children)}</a>`;
        default:
          return `<${n.type}>${inl(n.children)}</${n.type}>`;
      }
    })
    .join("");
}
function ser(blocks: MdBlock[], tight = false): string {
  return blocks
    .map((b) => {
      switch (b.type) {
        case "heading":
          return `<h${b.level}>${inl(b.children)}</h${b.level}>`;
        case "paragraph":
          return tight ? inl(b.children) : `<p>${inl(b.children)}</p>`;
        case "code":
          return `<pre${b.lang ? ` lang=${b.lang}` : ""}>${esc(b.text)}</pre>`;
        case "hr":
          return "<hr>";
        case "blockquote":
          return `<blockquote>${ser(b.children)}</blockquote>`;
        case "list": {
          const tag = b.ordered ? "ol" : "ul";
          const items = b.items.map(
            (it) => `<li>${it.checked === null ? "" : it.checked ? "[x] " : "[ ] "}${ser(it.children, b.tight)}</li>`,
          );
          return `<${tag}${b.start !== null && b.start !== 1 ? ` start=${b.start}` : ""}>${items.join("")}</${tag}>`;
        }
        case "table": {
          const cell = (tag: string, c: MdInline[], i: number) => `<${tag}${b.align[i] ? ` ${b.align[i]}` : ""}>${inl(c)}</${tag}>`;
          const head = `<tr>${b.head.map((c, i) => cell("th", c, i)).join("")}</tr>`;
          return `<table>${head}${b.rows.map((r) => `<tr>${r.map((c, i) => cell("td", c, i)).join("")}</tr>`).join("")}</table>`;
        }
      }
    })
    .join("\n");
}
const md = (src: string) => ser(parseMarkdown(src));
/** Inline content of a one-paragraph document. */
const one = (src: string) => {
  const blocks = parseMarkdown(src);
  expect(blocks).toHaveLength(1);
  const [p] = blocks;
  if (p?.type !== "paragraph") throw new Error(`expected a paragraph, got ${p?.type}`);
  return inl(p.children);
};
/** Every node of the tree, for "no such node anywhere" checks. */
function walk(blocks: MdBlock[]): (MdBlock | MdInline)[] {
  const out: (MdBlock | MdInline)[] = [];
  const inline = (ns: MdInline[]) => {
    for (const n of ns) {
      out.push(n);
      if ("children" in n) inline(n.children);
    }
  };
  const block = (bs: MdBlock[]) => {
    for (const b of bs) {
      out.push(b);
      if (b.type === "heading" || b.type === "paragraph") inline(b.children);
      else if (b.type === "blockquote") block(b.children);
      else if (b.type === "list") for (const it of b.items) block(it.children);
      else if (b.type === "table") for (const c of [...b.head, ...b.rows.flat()]) inline(c);
    }
  };
  block(blocks);
  return out;
}
const depthOf = (b: MdBlock): number =>
  b.type === "blockquote"
    ? 1 + Math.max(0, ...b.children.map(depthOf))
    : b.type === "list"
      ? 1 + Math.max(0, ...b.items.flatMap((i) => i.children.map(depthOf)))
      : 0;

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

describe("parseMarkdown: inline", () => {
  it("parses emphasis and strong with * and _", () => {
    expect(one("*a* **b** ***c*** _d_ __e__")).toBe(
      "<em>a</em> <strong>b</strong> <em><strong>c</strong></em> <em>d</em> <strong>e</strong>",
    );
    expect(one("*foo**bar**baz*")).toBe("<em>foo<strong>bar</strong>baz</em>");
    expect(one("**foo*bar*baz**")).toBe("<strong>foo<em>bar</em>baz</strong>");
    expect(one("*(*foo*)*")).toBe("<em>(<em>foo</em>)</em>");
    expect(one("**a\n**b**")).toBe("**a\n<strong>b</strong>");
  });

  it("follows flanking rules: no emphasis around spaces, none for intraword _", () => {
    expect(one("a * b * c")).toBe("a * b * c");
    expect(one("snake_case_name and foo_bar_")).toBe("snake_case_name and foo_bar_");
    expect(one("foo*bar*")).toBe("foo<em>bar</em>");
    expect(one("2*3*4")).toBe("2<em>3</em>4");
    expect(one("*unclosed and **also")).toBe("*unclosed and **also");
    expect(one("_(_ok_)_")).toBe("<em>(<em>ok</em>)</em>");
  });

  it("parses GFM strikethrough", () => {
    expect(one("~~gone~~ and ~one~")).toBe("<del>gone</del> and <del>one</del>");
    expect(one("x ~~~three~~~ ~~a~")).toBe("x ~~~three~~~ ~~a~");
    expect(one("~~**both**~~")).toBe("<del><strong>both</strong></del>");
  });

  it("parses code spans with matching backtick runs", () => {
    expect(one("`code` `` a ` b `` ` x ` `  ` ``` unclosed `")).toBe(
      "<code>code</code> <code>a ` b</code> <code>x</code> <code>  </code> ``` unclosed `",
    );
    expect(one("`*not emphasis* [not](/link)`")).toBe("<code>*not emphasis* [not](/link)</code>");
    expect(one("`multi\nline`")).toBe("<code>multi line</code>");
    expect(one("`a\\`b`")).toBe("<code>a\\</code>b`");
    expect(one("*a `*` b*")).toBe("<em>a <code>*</code> b</em>");
  });

  it("parses inline links with titles and angle destinations", () => {
    expect(one("[link](https://a.example/x \"Title\") [t2](/p 'single') [t3](/q (paren))")).toBe(
      '<a href=https://a.example/x title="Title">link</a> <a href=/p title="single">t2</a> <a href=/q title="paren">t3</a>',
    );
    expect(one("[a](</my path>) [b](/x(y)z) [c]( /spaced ) [d](/e\\)f)")).toBe(
      "<a href=/my path>a</a> <a href=/x(y)z>b</a> <a href=/spaced>c</a> <a href=/e)f>d</a>",
    );
    expect(one("[**bold** `code`](#frag)")).toBe("<a href=#frag><strong>bold</strong> <code>code</code></a>");
    expect(one("[not a link] [x](/unclosed")).toBe("[not a link] [x](/unclosed");
    expect(one("[a](/b?x=1&amp;y=2)")).toBe("<a href=/b?x=1&y=2>a</a>");
  });

  it("does not nest links, but lets emphasis cross only where CommonMark does", () => {
    expect(one("[a [b](/c) d](/e)")).toBe("[a <a href=/c>b</a> d](/e)");
    expect(one("*[a*](/b)")).toBe("*<a href=/b>a*</a>");
    expect(one("[a *b](/c) d*")).toBe("<a href=/c>a *b</a> d*");
    expect(one("[https://x.example](https://y.example)")).toBe("<a href=https://y.example>https://x.example</a>");
  });

  it("parses images (alt as plain text) and images inside links", () => {
    expect(one('![a *b* `c`](https://i.example/x.png "T")')).toBe('<img src=https://i.example/x.png alt="a b c" title="T">');
    expect(one("[![i](https://i.example/x.png)](https://l.example)")).toBe(
      '<a href=https://l.example><img src=https://i.example/x.png alt="i"></a>',
    );
    expect(one("![x](javascript:alert(1))")).toBe('<img src=NULL alt="x">');
    expect(one("! [not] !")).toBe("! [not] !");
  });

  it("parses angle-bracket autolinks and email autolinks", () => {
    expect(one("<https://a.example/b?c=d> <mailto:x@y.example> <ops@example.com>")).toBe(
      "<a href=https://a.example/b?c=d>https://a.example/b?c=d</a> <a href=mailto:x@y.example>mailto:x@y.example</a> <a href=mailto:ops@example.com>ops@example.com</a>",
    );
    expect(one("<not a link> <https://a b>")).toBe("&lt;not a link&gt; &lt;https://a b&gt;");
  });

  it("parses GFM bare autolinks and trims trailing punctuation", () => {
    expect(one("see https://example.com/a_(b)_c. and www.example.com, (https://x.example/y)")).toBe(
      "see <a href=https://example.com/a_(b)_c>https://example.com/a_(b)_c</a>. and <a href=http://www.example.com>www.example.com</a>, (<a href=https://x.example/y>https://x.example/y</a>)",
    );
    expect(one("*https://a.example/x*")).toBe("<em><a href=https://a.example/x>https://a.example/x</a></em>");
    expect(one("https://a.example/q?x=1&amp;")).toBe("<a href=https://a.example/q?x=1>https://a.example/q?x=1</a>&amp;");
    expect(one("xhttps://a.example www. https:// nowww.example.com")).toBe("xhttps://a.example www. https:// nowww.example.com");
    expect(one("HTTPS://A.EXAMPLE")).toBe("<a href=HTTPS://A.EXAMPLE>HTTPS://A.EXAMPLE</a>");
  });

  it("applies backslash escapes", () => {
    expect(one("\\*not em\\* \\[not link\\](/x) \\`not code\\` \\\\ \\a")).toBe("*not em* [not link](/x) `not code` \\ \\a");
    expect(one("\\<https://a.example>")).toBe("&lt;https://a.example&gt;");
    expect(one("\\<b>not a tag\\</b>")).toBe("&lt;b&gt;not a tag&lt;/b&gt;");
  });

  it("decodes only a few named entities and leaves the rest literal", () => {
    expect(one("&amp; &lt;b&gt; &quot;q&quot; &#39;s&#39; &copy; &#x41; &amp")).toBe(
      "&amp; &lt;b&gt; \"q\" 's' &amp;copy; &amp;#x41; &amp;amp",
    );
    expect(one("`&amp;`")).toBe("<code>&amp;amp;</code>");
  });

  it("supports reference links and definitions, defined before or after use", () => {
    const src =
      '[full][Bar] [collapsed][] [Shortcut] [missing][nope] [Bar]\n\n[bar]: https://b.example "Bar T"\n[collapsed]: </c d>\n\n[shortcut]: https://s.example\n[first]: /one\n[FIRST]: /two\n\n[first]';
    expect(md(src)).toBe(
      '<p><a href=https://b.example title="Bar T">full</a> <a href=/c d>collapsed</a> <a href=https://s.example>Shortcut</a> [missing][nope] <a href=https://b.example title="Bar T">Bar</a></p>\n' +
        "<p><a href=/one>first</a></p>",
    );
    expect(md("[bad]: javascript:alert(1)\n\n[bad] [x][bad]")).toBe("<p>bad x</p>");
    expect(md("[foo][ and [foo][bar\n\n[foo]: /f")).toBe("<p><a href=/f>foo</a>[ and <a href=/f>foo</a>[bar</p>");
    // Definitions are one line each: a destination on the next line is not read.
    expect(md("[split]:\n/next-line\n\n[split]")).toBe("<p>[split]:\n/next-line</p>\n<p>[split]</p>");
    expect(md('[t]: /u "not closed\n\n[t]')).toBe("<p>[t]: /u &quot;not closed</p>\n<p>[t]</p>".replace(/&quot;/g, '"'));
  });
});

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

describe("MarkdownView (server-rendered markup)", () => {
  const render = (text: string) => renderToStaticMarkup(createElement(MarkdownView, { text }));

  it("keeps the outer element, link attributes and image placeholder", () => {
    const html = render("[the wiki](https://wiki.example.com/p) ![diagram](https://example.com/d.png) ![local](/d.png)");
    expect(html.startsWith('<div class="baton-prose text-sm" data-content="markdown"><p>')).toBe(true);
    expect(html).toContain('<a href="https://wiki.example.com/p" rel="noopener noreferrer nofollow" target="_blank">the wiki</a>');
    expect(html).not.toContain("<img");
    expect(html.match(/data-image-placeholder/g)).toHaveLength(2);
    expect(html).toContain("Image not loaded: diagram");
    expect(html).toContain(
      '<a href="https://example.com/d.png" rel="noopener noreferrer nofollow" target="_blank" class="underline">open</a>',
    );
    expect(html).not.toContain('href="/d.png"');
  });

  it("renders raw HTML and unsafe links as text only", () => {
    const html = render("<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))");
    expect(html).not.toMatch(/<script|<img|javascript:/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("<p>x</p>");
  });

  it("renders tables, task items, code and start numbers", () => {
    const html = render("- [x] done\n- [ ] todo\n\n3. c\n\n| a | b |\n|:-:|--:|\n| 1 | 2 |\n\n```sh\nls\n```\n\n~~x~~");
    expect(html).toContain('<li data-task=""><input type="checkbox" disabled="" aria-label="done" checked=""/> done</li>');
    expect(html).toContain('<input type="checkbox" disabled="" aria-label="not done"/>');
    expect(html).toContain('<ol start="3"><li>c</li></ol>');
    // The table's scroller takes keyboard focus; code blocks carry a copy button (issue 12).
    expect(html).toContain(
      '<div class="overflow-x-auto" tabindex="0" role="region" aria-label="Table" data-table-scroll=""><table><thead><tr><th style="text-align:center">a</th><th style="text-align:right">b</th></tr></thead><tbody><tr><td style="text-align:center">1</td>',
    );
    expect(html).toContain('<pre tabindex="0"><code class="language-sh">ls</code></pre>');
    expect(html).toMatch(/<button type="button"[^>]*aria-label="Copy sh code">Copy<\/button>/);
    expect(html).toContain("<del>x</del>");
  });
});
