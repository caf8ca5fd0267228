"use client";
// What shows when the root layout itself fails (the header included), in
// place of the whole page. Baton's own: small on purpose, because Next.js
// loads the global error page with every page (its built-in one is about four
// times the size); plain inline styles, since the layout that loads the
// stylesheet is what failed.

export default function GlobalError({ error }: { error: Error & { digest?: string } }) {
  return (
    <html lang="en" style={{ colorScheme: "light dark" }}>
      <body style={{ fontFamily: "system-ui, sans-serif", maxWidth: "36rem", margin: "4rem auto", padding: "0 1rem", lineHeight: 1.5 }}>
        <h1 style={{ fontSize: "1.25rem" }}>Baton could not show this page</h1>
        <p>{error.digest ? `A server error occurred (ref ${error.digest}). ` : ""}Live data is unaffected; reload to try again.</p>
        <form>
          <button type="submit">Reload</button>
        </form>
      </body>
    </html>
  );
}
