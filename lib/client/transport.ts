"use client";
// The browser's only way to the console server: Connect over HTTP/1.1 with the
// binary codec, same origin, the session cookie, and the CSRF token of the
// signed-in session on every call (x-baton-csrf, see lib/client/csrf.ts). One
// transport and one client per service per page.

import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ActionService } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { fetchWhoAmI } from "@/lib/client/auth";
import { createCsrfStore, csrfInterceptor } from "@/lib/client/csrf";

export type ConsoleClient = Client<typeof ConsoleService>;
export type ActionClient = Client<typeof ActionService>;

/** The page's CSRF token; useWhoAmI keeps it current. */
export const csrfStore = createCsrfStore(async () => (await fetchWhoAmI())?.csrfToken);

let transport: Transport | undefined;
let client: ConsoleClient | undefined;
let actions: ActionClient | undefined;

function browserTransport(): Transport {
  if (typeof window === "undefined") throw new Error("the Connect transport is browser-only");
  transport ??= createConnectTransport({
    baseUrl: window.location.origin,
    useBinaryFormat: true,
    fetch: (input, init) => globalThis.fetch(input, { ...init, credentials: "same-origin" }),
    interceptors: [csrfInterceptor(csrfStore, new Set([ActionService.typeName]))],
  });
  return transport;
}

export function consoleClient(): ConsoleClient {
  client ??= createClient(ConsoleService, browserTransport());
  return client;
}

export function actionClient(): ActionClient {
  actions ??= createClient(ActionService, browserTransport());
  return actions;
}
