"use client";
// The browser's only way to the console server: Connect over HTTP/1.1 with the
// binary codec, same origin. One transport and one client per page.

import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";

export type ConsoleClient = Client<typeof ConsoleService>;

let client: ConsoleClient | undefined;

export function consoleClient(): ConsoleClient {
  if (typeof window === "undefined") throw new Error("consoleClient() is browser-only");
  if (!client) {
    const transport = createConnectTransport({ baseUrl: window.location.origin, useBinaryFormat: true });
    client = createClient(ConsoleService, transport);
  }
  return client;
}
