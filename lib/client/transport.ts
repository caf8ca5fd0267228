"use client";
// The browser's only way to the console server: Connect over HTTP/1.1 with the
// binary codec, same origin, the sign-in cookie, and the CSRF token of the
// sign-in on every call (x-baton-csrf, see lib/client/csrf.ts; the
// token itself lives in lib/client/csrf-store.ts). One transport and one
// client per service per page. Only pages that talk Connect import this: the
// layout stays free of Connect and the generated descriptors.

import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ActionService } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { FileHandoffService } from "@/lib/gen/baton/v1/files_pb";
import { csrfInterceptor } from "@/lib/client/csrf";
import { csrfStore } from "@/lib/client/csrf-store";
import { claimEarlyFetch } from "@/lib/client/early-fetch";
import { reauthInterceptor } from "@/lib/client/reauth";
import { refreshWhoAmI } from "@/lib/client/use-whoami";

export type ConsoleClient = Client<typeof ConsoleService>;
export type ActionClient = Client<typeof ActionService>;
export type FileClient = Client<typeof FileHandoffService>;

let transport: Transport | undefined;
let client: ConsoleClient | undefined;
let actions: ActionClient | undefined;
let files: FileClient | undefined;

function browserTransport(): Transport {
  if (typeof window === "undefined") throw new Error("the Connect transport is browser-only");
  transport ??= createConnectTransport({
    baseUrl: window.location.origin,
    useBinaryFormat: true,
    // A request the page already sent (the session page's stream, lib/client/early-fetch.ts) is taken over, not sent again.
    fetch: (input, init) => claimEarlyFetch(String(input), init) ?? globalThis.fetch(input, { ...init, credentials: "same-origin" }),
    interceptors: [
      csrfInterceptor(csrfStore, new Set([ActionService.typeName, FileHandoffService.typeName])),
      reauthInterceptor(() => void refreshWhoAmI()),
    ],
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

export function fileClient(): FileClient {
  files ??= createClient(FileHandoffService, browserTransport());
  return files;
}
