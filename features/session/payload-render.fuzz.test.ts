// Render fuzzing (issue 10, item 4): random, deep, huge and hostile payloads
// of every content type, through the real components the session page uses
// (the server-rendered first view and the live viewers, rendered with
// react-dom/server), and whole sessions full of them through SessionPreview.
// Every render must finish, stay within a size bound that does not depend on
// how deep or large the payload is, nest its markup only so deep (deeply
// nested elements are what overflowed the browser's stack), and contain
// nothing active: no script, no event handler, no frame, no link to a
// javascript: or data: URL.
//
// Seeded and reproducible: BATON_RENDER_FUZZ_SEED picks the seed (printed on
// failure), BATON_RENDER_FUZZ_CASES the number of payload cases (default
// 200; `npm run fuzz:render` runs 5,000).
import { createElement, type ReactElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { applySubscribeBatch, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { caughtUpMsg, env, eventMsg, metadataMsg, SID } from "@/lib/views/test/fixtures";
import type { PayloadBlob } from "@/lib/views/event-details";
import { MAX_RENDERED_BYTES } from "@/lib/views/content";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { JsonView, PayloadView, UntypedPayloadView } from "@/features/session/PayloadView";
import { SessionPreview } from "@/features/session/SessionPreview";
import { StaticPayload } from "@/features/session/StaticPayload";
import { WithAppRouter } from "@/lib/client/test/app-router";

const SEED = Number(process.env.BATON_RENDER_FUZZ_SEED ?? 0x5eed_0010);
const CASES = Math.max(1, Number(process.env.BATON_RENDER_FUZZ_CASES ?? 200));

/** mulberry32: small, fast, good enough to pick test inputs. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const HOSTILE = [
  "<script>window.__pwned=1</script>",
  '<img src=x onerror="window.__pwned=2">',
  "<svg onload=window.__pwned=3>",
  '"><iframe srcdoc="<script>parent.__pwned=4</script>">',
  "</pre></code><script>window.__pwned=5</script>",
  "javascript:window.__pwned=6",
  "[click](javascript:window.__pwned=7)",
  '[click](JaVaScRiPt:window.__pwned=8 "t")',
  '<a href="javascript&#58;window.__pwned=9">x</a>',
  "![x](javascript:window.__pwned=10)",
  "![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  '<https://example.com/"onmouseover="window.__pwned=11>',
  "<style>*{background:url(javascript:alert(1))}</style>",
  '<base href="https://evil.example/">',
  '<form action="https://evil.example/"><button>go</button></form>',
  '<meta http-equiv="refresh" content="0;url=https://evil.example">',
  "{{constructor.constructor('window.__pwned=12')()}}",
  "\u202eevil\u202c \u0000 \uffff \ud800",
];

const TYPES = [
  "text/markdown",
  "text/markdown; charset=utf-8",
  "TEXT/X-MARKDOWN",
  "application/json",
  "application/ld+json",
  "application/vnd.baton.test+json",
  "text/json",
  "application/x-ndjson",
  "text/plain",
  "text/csv",
  "text/html",
  "image/svg+xml",
  "application/xhtml+xml",
  "text/javascript",
  "application/octet-stream",
  "application/pdf",
  "",
  "not a media type;;;",
];

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

function randomString(r: Rand, max: number): string {
  const kind = r();
  if (kind < 0.3) return pick(r, HOSTILE);
  const n = int(r, 0, max);
  let s = "";
  for (let i = 0; i < n; i++) {
    const c = r();
    s +=
      c < 0.8
        ? String.fromCharCode(int(r, 0x20, 0x7e))
        : c < 0.9
          ? pick(r, ["<", ">", "&", '"', "'", "\n", "`", "\\"])
          : String.fromCodePoint(int(r, 0xa0, 0x1f600));
  }
  return s;
}

/**
 * A random JSON document as text: mostly small and bushy, sometimes very
 * deep, very wide or very long. Deep ones are written as text directly
 * (JSON.stringify itself overflows the stack on them; JSON.parse does not).
 */
function randomJsonText(r: Rand): string {
  if (r() < 0.15) {
    // Deep: 1,000 to 20,000 levels of arrays or objects (6 KB to 120 KB).
    const depth = int(r, 1_000, 20_000);
    const leaf = JSON.stringify(pick(r, HOSTILE));
    return r() < 0.5 ? `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}` : `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  }
  return JSON.stringify(randomJson(r));
}

/** A random (not deep) JSON value: mostly small and bushy, sometimes very wide or very long. */
function randomJson(r: Rand): unknown {
  const shape = r();
  if (shape < 0.1) {
    // Wide: up to 20,000 keys or items.
    const n = int(r, 1_000, 20_000);
    if (r() < 0.5) return Array.from({ length: n }, (_, i) => (i % 7 === 0 ? pick(r, HOSTILE) : i));
    const o: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) o[`k${i}${i % 11 === 0 ? pick(r, HOSTILE) : ""}`] = i;
    return o;
  }
  if (shape < 0.18) return { long: "x".repeat(int(r, 10_000, 400_000)), hostile: pick(r, HOSTILE) };
  const build = (depth: number): unknown => {
    const t = r();
    if (depth > 6 || t < 0.35) {
      const leaf = r();
      return leaf < 0.4 ? randomString(r, 40) : leaf < 0.7 ? int(r, -1e6, 1e6) : leaf < 0.85 ? r() < 0.5 : null;
    }
    if (t < 0.7) return Array.from({ length: int(r, 0, 8) }, () => build(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = int(r, 0, 8); i > 0; i--) o[randomString(r, 12)] = build(depth + 1);
    return o;
  };
  return build(0);
}

function randomMarkdown(r: Rand): string {
  const shape = r();
  if (shape < 0.1) return ">".repeat(int(r, 500, 5_000)) + " deep quote " + pick(r, HOSTILE);
  if (shape < 0.2) return Array.from({ length: int(r, 200, 2_000) }, (_, i) => `${"  ".repeat(i)}- item ${i}`).join("\n");
  if (shape < 0.28) return "*".repeat(int(r, 1_000, 20_000)) + "x" + "*".repeat(int(r, 1_000, 20_000));
  if (shape < 0.34) return "[".repeat(int(r, 1_000, 10_000)) + "x" + "](javascript:alert(1))".repeat(int(r, 1, 50));
  if (shape < 0.4) return `# Runbook\n\n${"long paragraph ".repeat(int(r, 5_000, 35_000))}`;
  const parts: string[] = [];
  for (let i = int(r, 1, 30); i > 0; i--) {
    parts.push(
      pick(r, [
        `# ${randomString(r, 30)}`,
        `- ${randomString(r, 40)}\n  - ${randomString(r, 20)}`,
        `> ${randomString(r, 60)}`,
        "```\n" + randomString(r, 80) + "\n```",
        `| a | b |\n| --- | :-: |\n| ${randomString(r, 10)} | ${pick(r, HOSTILE)} |`,
        `[${randomString(r, 10)}](${pick(r, ["https://example.com", "javascript:alert(1)", "data:text/html,x", "//evil.example", "mailto:a@b.c", "#x"])})`,
        pick(r, HOSTILE),
        randomString(r, 120),
      ]),
    );
  }
  return parts.join("\n\n");
}

const enc = new TextEncoder();

function randomBytes(r: Rand, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

/** A payload blob of a random content type, with content that may or may not match the type. */
function randomBlob(r: Rand, i: number): PayloadBlob {
  const contentType = pick(r, TYPES);
  const what = r();
  let bytes: Uint8Array;
  if (what < 0.35) bytes = enc.encode(randomJsonText(r));
  else if (what < 0.65) bytes = enc.encode(randomMarkdown(r));
  else if (what < 0.75) bytes = enc.encode(randomString(r, 2_000));
  else if (what < 0.85) bytes = randomBytes(r, int(r, 0, 4_096));
  else if (what < 0.92) bytes = enc.encode("a".repeat(MAX_RENDERED_BYTES + int(r, 1, 1_000)));
  else bytes = enc.encode(randomJsonText(r).slice(0, int(r, 1, 200)));
  return { label: pick(r, ["Context", "Input", "Output", "Partial output"]), contentType, bytes, stem: `fuzz-${i}` };
}

// ------------------------------------------------------------- inspection

const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "source",
  "track",
  "wbr",
  "path",
  "circle",
  "rect",
  "line",
  "polyline",
  "polygon",
]);

/** Deepest element nesting in server-rendered HTML (React closes every non-void element). */
function maxNesting(html: string): number {
  let depth = 0;
  let max = 0;
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(\/?)>/g;
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    const name = (m[2] ?? "").toLowerCase();
    if (m[1] === "/") depth--;
    else if (!VOID.has(name) && m[3] !== "/") max = Math.max(max, ++depth);
  }
  return max;
}

/**
 * Markup that could act: anything a payload might have smuggled in. Empty
 * when clean. Only real tags are inspected (text is escaped: a payload's
 * "<svg onload=…>" is text, `&lt;svg onload=…&gt;`, and harmless).
 */
function activeMarkup(html: string): string[] {
  const found: string[] = [];
  const ACTIVE_TAGS = new Set([
    "script",
    "iframe",
    "object",
    "embed",
    "img",
    "form",
    "base",
    "meta",
    "link",
    "style",
    "frame",
    "input",
    "video",
    "audio",
    "template",
  ]);
  const tag = /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*\/?>/g;
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    const name = (m[1] ?? "").toLowerCase();
    if (ACTIVE_TAGS.has(name)) found.push(`<${name}>`);
    const attrs = m[2] ?? "";
    for (const a of attrs.matchAll(/\s([^\s=>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
      const attr = (a[1] ?? "").toLowerCase();
      const value = (a[2] ?? a[3] ?? a[4] ?? "").replace(/&amp;/g, "&").trim();
      if (/^on/.test(attr) || attr === "srcdoc" || attr === "formaction") found.push(`<${name} ${attr}>`);
      if (["href", "src", "action", "xlink:href"].includes(attr) && !/^(https?:|mailto:|#|\/(?!\/))/i.test(value))
        found.push(`<${name} ${attr}="${value.slice(0, 60)}">`);
      if (attr === "style" && /url\(|expression|javascript/i.test(value)) found.push(`<${name} style="${value}">`);
    }
  }
  return found;
}

interface Bound {
  /** Largest HTML accepted for one render. */
  maxHtml: number;
  /** Deepest element nesting accepted. */
  maxDepth: number;
}

const FIRST_VIEW: Bound = { maxHtml: 400_000, maxDepth: 60 };
const LIVE: Bound = { maxHtml: 8_000_000, maxDepth: 120 };

function check(what: string, element: ReactElement, bound: Bound): string {
  let html: string;
  try {
    html = renderToString(element);
  } catch (e) {
    throw new Error(`${what}: render threw ${(e as Error).name}: ${(e as Error).message} (seed ${SEED})`);
  }
  expect(html.length, `${what}: HTML size (seed ${SEED})`).toBeLessThanOrEqual(bound.maxHtml);
  expect(maxNesting(html), `${what}: element nesting (seed ${SEED})`).toBeLessThanOrEqual(bound.maxDepth);
  expect(activeMarkup(html), `${what}: active markup (seed ${SEED})`).toEqual([]);
  return html;
}

// CPU-bound (about 10 s on an idle 2-core machine): allowed room for a busy one, since it is not a speed test.
describe("rendering agent payloads (fuzzed)", { timeout: 120_000 }, () => {
  it(`renders ${CASES} random payloads of every content type through the first view and the live viewers, bounded and inert`, () => {
    const r = rng(SEED);
    for (let i = 0; i < CASES; i++) {
      const blob = randomBlob(r, i);
      const label = `case ${i} (${blob.contentType || "untyped"}, ${blob.bytes.byteLength} bytes)`;
      check(`${label} first view typed`, createElement(StaticPayload, { blob, typed: true }), FIRST_VIEW);
      check(`${label} first view untyped`, createElement(StaticPayload, { blob, typed: false }), FIRST_VIEW);
      check(`${label} live typed`, createElement(PayloadView, { blob }), LIVE);
      check(`${label} live untyped`, createElement(UntypedPayloadView, { blob }), LIVE);
    }
  });

  it("renders decoded JSON of any shape in the live JSON viewer (raw envelopes)", () => {
    const r = rng(SEED ^ 0x1234);
    for (let i = 0; i < Math.ceil(CASES / 4); i++)
      check(`json ${i}`, createElement(JsonView, { value: JSON.parse(randomJsonText(r)) as unknown, label: "Decoded payload" }), LIVE);
  });

  it("renders whole sessions full of hostile values and payloads as a first view", () => {
    const r = rng(SEED ^ 0xbeef);
    for (let s = 0; s < Math.max(2, Math.ceil(CASES / 40)); s++) {
      const task = r() < 0.5;
      const mode = task ? TASK_MODE : HANDOFF_MODE;
      const start = env(mode, "SessionStart", {
        intent: r() < 0.2 ? "i".repeat(200_000) : randomString(r, 200),
        participants: ["alice", "bob"],
        modeVersion: "1.0.0",
        configurationVersion: "config.default",
        ttlMs: 3_600_000n,
      });
      const events = [start];
      if (task) {
        events.push(
          env(mode, "TaskRequest", {
            taskId: "t1",
            title: randomString(r, 100),
            instructions: randomString(r, 5_000),
            requestedAssignee: "bob",
            input: randomBlob(r, s).bytes,
          }),
        );
        events.push(env(mode, "TaskAccept", { taskId: "t1", assignee: "bob", reason: randomString(r, 300) }, { sender: "bob" }));
        for (let k = int(r, 0, 4); k > 0; k--)
          events.push(
            env(
              mode,
              "TaskUpdate",
              {
                taskId: "t1",
                status: randomString(r, 30),
                progress: r(),
                message: randomString(r, 300),
                partialOutput: randomBlob(r, k).bytes,
              },
              { sender: "bob" },
            ),
          );
        events.push(
          env(
            mode,
            "TaskComplete",
            { taskId: "t1", assignee: "bob", summary: randomString(r, 2_000), output: randomBlob(r, 99).bytes },
            { sender: "bob" },
          ),
        );
      } else {
        events.push(
          env(mode, "HandoffOffer", {
            handoffId: "h1",
            targetParticipant: "bob",
            scope: randomString(r, 300),
            reason: randomString(r, 3_000),
          }),
        );
        for (let k = int(r, 1, 6); k > 0; k--) {
          const blob = randomBlob(r, k);
          events.push(env(mode, "HandoffContext", { handoffId: "h1", contentType: blob.contentType, context: blob.bytes }));
        }
        events.push(
          env(
            mode,
            r() < 0.5 ? "HandoffAccept" : "HandoffDecline",
            { handoffId: "h1", acceptedBy: "bob", declinedBy: "bob", reason: randomString(r, 3_000) },
            { sender: "bob" },
          ),
        );
      }
      const batch = [metadataMsg(SessionState.OPEN), ...events.map((e, i) => eventMsg(i + 1, e)), caughtUpMsg(events.length)];
      const { state } = applySubscribeBatch(initialSessionStreamState(SID), batch);
      // A first view shows at most PREVIEW_ROWS rows (SessionPreview.tsx); each is bounded, so the page is.
      // Next.js's router context, as the app provides it (links in rows read it; nothing navigates here).
      const page = createElement(WithAppRouter, null, createElement(SessionPreview, { state }));
      check(`session ${s}`, page, { maxHtml: 24 * FIRST_VIEW.maxHtml, maxDepth: FIRST_VIEW.maxDepth + 20 });
    }
  });

  it("keeps the regression case small: a context nested 3,000 deep (about 6 KB)", () => {
    const deep = '{"a":'.repeat(3_000) + "1" + "}".repeat(3_000);
    const blob: PayloadBlob = { label: "Context", contentType: "application/json", bytes: enc.encode(deep), stem: "deep" };
    const first = check("deep first view", createElement(StaticPayload, { blob, typed: true }), FIRST_VIEW);
    // Before the bound this first view was about 2.8 MB of nested <details>.
    expect(first.length).toBeLessThan(20_000);
    expect(first).toContain("nested too deep to show");
    const live = check("deep live", createElement(PayloadView, { blob }), LIVE);
    expect(live).toContain("nested too deep to show");
    expect(live).toContain("Download");
    const output = check(
      "deep task output",
      createElement(UntypedPayloadView, { blob: { ...blob, contentType: "", label: "Output" } }),
      LIVE,
    );
    expect(output).toContain("nested too deep to show");
  });
});
