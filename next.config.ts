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
  // A type error fails the build (as it fails `npm test`'s tsc step).
  typescript: { ignoreBuildErrors: false },
  // Native / worker-thread packages stay plain Node requires on the server.
  serverExternalPackages: ["better-sqlite3", "pino"],
};

export default nextConfig;
