import { describe, expect, it } from "vitest";
import { md, one } from "./__fixtures__/markdown-kit";

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
