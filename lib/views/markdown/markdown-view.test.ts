import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MarkdownView } from "@/features/session/Markdown";

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
