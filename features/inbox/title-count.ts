// The tab title carries the inbox count: "(3) Sessions · Baton". Pages set
// their own titles (Next.js metadata, the session page's live title), so the
// count is a prefix kept in place: set now, and set again whenever something
// else rewrites the title. Browser-only.

const PREFIX = /^\(\d+\+?\) /;

/** The title with `count` as its prefix (none for 0). Pure. */
export function titleWithCount(title: string, count: number): string {
  const base = title.replace(PREFIX, "");
  if (count <= 0) return base;
  return `(${count > 99 ? "99+" : count}) ${base}`;
}

/** Keep the count on the document's title until the returned function is called (which removes it). */
export function keepTitleCount(doc: Document, count: number): () => void {
  const apply = (): void => {
    const next = titleWithCount(doc.title, count);
    if (next !== doc.title) doc.title = next;
  };
  apply();
  // The <title> element's text changes, or the element is replaced, on navigation.
  const observer = new MutationObserver(apply);
  observer.observe(doc.head, { subtree: true, childList: true, characterData: true });
  return () => {
    observer.disconnect();
    doc.title = titleWithCount(doc.title, 0);
  };
}
