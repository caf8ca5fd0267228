// Content negotiation of `Accept-Encoding` (RFC 9110 §12.5.3), q-values
// included: the console server uses it to pick a pre-compressed static file
// and to tell connect-node which encodings a browser takes for unary replies.

export type Coding = "br" | "gzip";

/** Weights by coding name (lower case); "*" for the wildcard. Malformed members are ignored. */
export function parseAcceptEncoding(header: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (!header) return out;
  for (const member of header.split(",")) {
    const [rawName, ...params] = member.split(";");
    const name = rawName?.trim().toLowerCase() ?? "";
    if (!/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
    }
    // The first mention of a name wins (a repeated name is a client bug).
    if (!out.has(name)) out.set(name, q);
  }
  return out;
}

function weight(accepted: Map<string, number>, coding: string): number {
  return accepted.get(coding) ?? accepted.get("*") ?? 0;
}

/**
 * The best of `available` (in the server's order of preference, e.g. br
 * before gzip) the client accepts, or "identity". With no header at all any
 * coding is acceptable, but identity is what a client that says nothing expects.
 */
export function chooseEncoding(header: string | undefined, available: readonly Coding[]): Coding | "identity" {
  if (header === undefined) return "identity";
  const accepted = parseAcceptEncoding(header);
  let best: Coding | "identity" = "identity";
  let bestQ = 0;
  for (const c of available) {
    const q = weight(accepted, c);
    if (q > bestQ) {
      best = c;
      bestQ = q;
    }
  }
  return best;
}

/**
 * The codings the client accepts, best first (ties in the server's order), as
 * a plain comma list without weights: what connect-node reads from
 * Accept-Encoding (it takes names in order and does not read q-values).
 */
export function acceptedCodings(header: string | undefined, available: readonly Coding[]): Coding[] {
  if (header === undefined) return [];
  const accepted = parseAcceptEncoding(header);
  return available
    .map((c, i) => ({ c, i, q: weight(accepted, c) }))
    .filter((x) => x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.c);
}
