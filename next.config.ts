import type { NextConfig } from "next";

// Next.js runs inside Baton's own console server (lib/server), which also
// serves the Connect API. Nothing here may delay streamed responses.
const nextConfig: NextConfig = {
  // Pages (HTML, RSC payloads) are gzipped by Next.js's own middleware, which
  // flushes after every chunk of a streamed render. It never sees a Connect
  // request: the console server answers those before handing anything to
  // Next.js, streams uncompressed (lib/server/http.ts). /_next/static is
  // served pre-compressed by the console server too (static-assets.ts).
  compress: true,
  poweredByHeader: false,
  reactStrictMode: true,
  // Types are checked once, by `npm test`'s `tsc --noEmit` over the whole
  // project (pages, runtime, scripts and tests), where a type error fails the
  // suite. `next build` would check the same files again: 54 s of a clean
  // clone's 176 s of installing and building (2026-11-27, 2 cores).
  typescript: { ignoreBuildErrors: true },
  // Native / worker-thread packages stay plain Node requires on the server.
  serverExternalPackages: ["better-sqlite3", "pino"],
};

export default nextConfig;
