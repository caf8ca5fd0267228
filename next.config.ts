import type { NextConfig } from "next";

// Next.js runs inside Baton's own console server (lib/server), which also
// serves the Connect API. Nothing here may delay streamed responses.
const nextConfig: NextConfig = {
  // The console server answers Connect streams itself and must flush each
  // message at once; never gzip anything from this process.
  compress: false,
  poweredByHeader: false,
  reactStrictMode: true,
  // `npm test` / `npm run typecheck` type-check the whole project (tests
  // included); a type error in a test must not stop `npm start` from serving.
  typescript: { ignoreBuildErrors: true },
  // Native / worker-thread packages stay plain Node requires on the server.
  serverExternalPackages: ["better-sqlite3", "pino"],
};

export default nextConfig;
