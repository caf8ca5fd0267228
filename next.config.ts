import type { NextConfig } from "next";

// Next.js runs inside Baton's own console server (lib/server), which also
// serves the Connect API. Nothing here may delay streamed responses.
const nextConfig: NextConfig = {
  // The console server answers Connect streams itself and must flush each
  // message at once; never gzip anything from this process.
  compress: false,
  poweredByHeader: false,
  reactStrictMode: true,
  // A type error fails the build (as it fails `npm test`'s tsc step).
  typescript: { ignoreBuildErrors: false },
  // Native / worker-thread packages stay plain Node requires on the server.
  serverExternalPackages: ["better-sqlite3", "pino"],
};

export default nextConfig;
