import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { Announcer } from "@/features/shell/Announcer";
import { Providers } from "@/features/shell/Providers";
import { SiteHeader } from "@/features/shell/SiteHeader";
import { AuthGate } from "@/features/sign-in/AuthGate";
import { InboxWatcher } from "@/features/inbox/InboxWatcher";
import { KeyboardShortcuts } from "@/features/shell/KeyboardShortcuts";
import { RuntimeBanner } from "@/features/shell/RuntimeBanner";
import { THEME_INIT_SCRIPT } from "@/lib/client/theme";
import { NONCE_HEADER } from "@/lib/views/nonce-header";
import { pageData } from "@/lib/server/page-data";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Baton", template: "%s · Baton" },
  description: "Live MACP handoffs and tasks",
  icons: { icon: [{ url: "/favicon.svg", type: "image/svg+xml" }] },
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#020617" },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // The console server gives every page request a CSP nonce
  // (lib/server/security-headers.ts); reading it renders pages per request.
  const nonce = (await headers()).get(NONCE_HEADER) ?? undefined;
  // "Files" in the header only when the console watches v0.1 handoff directories.
  const filesEnabled = pageData()?.fileHandoffsEnabled?.() ?? false;
  // Whether the server found the request signed in: the inbox then shows its first view at once.
  const signedIn = (await pageData()?.signedIn?.(await headers())) ?? false;
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* Applies the saved or system theme before first paint (no flash). */}
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_INIT_SCRIPT }} />
      </head>
      <body className="min-h-dvh font-sans">
        <Providers>
          <SiteHeader filesEnabled={filesEnabled} />
          <RuntimeBanner />
          <main id="main" tabIndex={-1} className="mx-auto max-w-[1600px] px-3 pt-4 pb-16 outline-none sm:px-5">
            <AuthGate serverSignedIn={signedIn}>{children}</AuthGate>
          </main>
          <InboxWatcher />
          <Announcer />
          <KeyboardShortcuts />
        </Providers>
      </body>
    </html>
  );
}
