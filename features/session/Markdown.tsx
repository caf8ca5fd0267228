// Renders markdown from a payload with Baton's own parser (lib/views/markdown).
// The parser's tree only ever becomes plain React elements: raw HTML in the
// text arrives here as text, link targets were already filtered by safeHref,
// links open with rel="noopener noreferrer nofollow", and images are never
// fetched (a placeholder with an "open" link stands in). There is no
// dangerouslySetInnerHTML on this path. No hooks and no "use client": the
// server renders it in the session page's first view, the browser in the
// live timeline (whose rows are memoized, so a runbook is parsed once).

import { Fragment, type ReactNode } from "react";
import { parseMarkdown, type MdAlign, type MdBlock, type MdInline, type MdListItem } from "@/lib/views/markdown";
import { CopyButton } from "@/components/ui/CopyButton";
import { Icon } from "@/components/ui/Icon";

const REL = "noopener noreferrer nofollow";

function alignStyle(align: MdAlign | undefined): { textAlign: "left" | "center" | "right" } | undefined {
  return align ? { textAlign: align } : undefined;
}

function ImagePlaceholder({ src, alt }: { src: string | null; alt: string }) {
  return (
    <span
      className="inline-flex items-center gap-1.5 rounded border border-dashed border-slate-400 px-2 py-0.5 text-xs text-slate-700 dark:border-slate-500 dark:text-slate-300"
      data-image-placeholder
    >
      <Icon name="image" className="h-3.5 w-3.5" />
      <span>Image not loaded{alt ? `: ${alt}` : ""}</span>
      {src && /^https?:/i.test(src) ? (
        <a href={src} rel={REL} target="_blank" className="underline">
          open
        </a>
      ) : null}
    </span>
  );
}

function renderInline(nodes: MdInline[]): ReactNode[] {
  return nodes.map((n, i) => {
    switch (n.type) {
      case "text":
        return <Fragment key={i}>{n.text}</Fragment>;
      case "strong":
        return <strong key={i}>{renderInline(n.children)}</strong>;
      case "em":
        return <em key={i}>{renderInline(n.children)}</em>;
      case "del":
        return <del key={i}>{renderInline(n.children)}</del>;
      case "code":
        return <code key={i}>{n.text}</code>;
      case "break":
        return <br key={i} />;
      case "link":
        return (
          <a key={i} href={n.href} rel={REL} target="_blank" title={n.title ?? undefined}>
            {renderInline(n.children)}
          </a>
        );
      case "image":
        return <ImagePlaceholder key={i} src={n.src} alt={n.alt} />;
    }
  });
}

function TaskBox({ checked }: { checked: boolean }) {
  return <input type="checkbox" disabled checked={checked} aria-label={checked ? "done" : "not done"} />;
}

function ListItem({ item, tight }: { item: MdListItem; tight: boolean }) {
  const box = item.checked === null ? null : <TaskBox checked={item.checked} />;
  const [first, ...rest] = item.children;
  // In a loose item the box goes inside the first paragraph, so it sits on the text's line.
  if (box && !tight && first?.type === "paragraph") {
    return (
      <li data-task="">
        <p>
          {box} {renderInline(first.children)}
        </p>
        {renderBlocks(rest, false)}
      </li>
    );
  }
  return (
    <li {...(box ? { "data-task": "" } : {})}>
      {box}
      {box && item.children.length ? " " : null}
      {renderBlocks(item.children, tight)}
    </li>
  );
}

/** `tight`: paragraphs directly in a tight list item render without a <p>. */
function renderBlocks(blocks: MdBlock[], tight: boolean): ReactNode[] {
  return blocks.map((b, i) => {
    switch (b.type) {
      case "heading": {
        const H = `h${b.level}` as const;
        return <H key={i}>{renderInline(b.children)}</H>;
      }
      case "paragraph":
        return tight ? <Fragment key={i}>{renderInline(b.children)}</Fragment> : <p key={i}>{renderInline(b.children)}</p>;
      case "code":
        // A copy button over the block (commands in a runbook get pasted).
        return (
          <div key={i} className="baton-code" data-code-block="">
            {/* Scrolls sideways, so it takes focus for the keyboard. */}
            {/* eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex */}
            <pre tabIndex={0}>
              <code className={b.lang ? `language-${b.lang}` : undefined}>{b.text}</code>
            </pre>
            <CopyButton
              text={b.text}
              label={`Copy ${b.lang ? `${b.lang} ` : ""}code`}
              className="absolute top-1 right-1 print:hidden bg-white/90 px-1.5 py-0.5 no-underline ring-1 ring-slate-300 ring-inset dark:bg-slate-950/90 dark:ring-slate-600"
            />
          </div>
        );
      case "hr":
        return <hr key={i} />;
      case "blockquote":
        return <blockquote key={i}>{renderBlocks(b.children, false)}</blockquote>;
      case "list": {
        const items = b.items.map((item, j) => <ListItem key={j} item={item} tight={b.tight} />);
        return b.ordered ? (
          <ol key={i} start={b.start !== null && b.start !== 1 ? b.start : undefined}>
            {items}
          </ol>
        ) : (
          <ul key={i}>{items}</ul>
        );
      }
      case "table":
        return (
          // The table scrolls sideways (words stay whole), so it takes focus for the keyboard.
          // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
          <div key={i} className="overflow-x-auto" tabIndex={0} role="region" aria-label="Table" data-table-scroll="">
            <table>
              <thead>
                <tr>
                  {b.head.map((cell, c) => (
                    <th key={c} style={alignStyle(b.align[c])}>
                      {renderInline(cell)}
                    </th>
                  ))}
                </tr>
              </thead>
              {b.rows.length ? (
                <tbody>
                  {b.rows.map((row, r) => (
                    <tr key={r}>
                      {row.map((cell, c) => (
                        <td key={c} style={alignStyle(b.align[c])}>
                          {renderInline(cell)}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              ) : null}
            </table>
          </div>
        );
    }
  });
}

export function MarkdownView({ text }: { text: string }) {
  const blocks = parseMarkdown(text);
  return (
    <div className="baton-prose text-sm" data-content="markdown">
      {renderBlocks(blocks, false)}
    </div>
  );
}
