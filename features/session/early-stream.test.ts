// The server-built stream request is the one the browser's Connect transport
// sends for the same call: same URL, headers and body, so that the
// transport's fetch takes the early response over (lib/client/early-fetch.ts).
import { fromBinary } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { describe, expect, it } from "vitest";
import { ConsoleService, SubscribeSessionRequestSchema } from "@/lib/gen/baton/v1/console_pb";
import { earlySubscribeRequest } from "./early-stream";

const ORIGIN = "http://console.test";

/** What the browser's transport (configured as lib/client/transport.ts does) sends for this call. */
async function sentByTransport(
  sessionId: string,
  afterSequence: bigint,
): Promise<{ url: string; headers: Record<string, string>; body: Uint8Array }> {
  let sent: { url: string; headers: Record<string, string>; body: Uint8Array } | undefined;
  const transport = createConnectTransport({
    baseUrl: ORIGIN,
    useBinaryFormat: true,
    fetch: (input, init) => {
      sent = {
        url: String(input),
        headers: Object.fromEntries(new Headers(init?.headers)),
        body: init?.body as Uint8Array,
      };
      return Promise.reject(new Error("recorded"));
    },
  });
  const client = createClient(ConsoleService, transport);
  await expect(async () => {
    for await (const _ of client.subscribeSession({ sessionId, afterSequence })) break;
  }).rejects.toThrow();
  if (!sent) throw new Error("the transport sent nothing");
  return sent;
}

describe("earlySubscribeRequest", () => {
  it.each([
    ["resuming after the first view", "7f0c2d5e-4a1b-4c3d-9e8f-0123456789ab", 1234n],
    ["from the start", "session-without-a-first-view", 0n],
  ])("is the transport's own request, %s", async (_, sessionId, afterSequence) => {
    const early = earlySubscribeRequest(sessionId, afterSequence);
    const sent = await sentByTransport(sessionId, afterSequence);
    expect(new URL(early.url, ORIGIN).href).toBe(sent.url);
    expect(early.headers).toEqual(sent.headers);
    expect(base64Decode(early.body)).toEqual(sent.body);
    const request = fromBinary(SubscribeSessionRequestSchema, base64Decode(early.body).subarray(5));
    expect(request.sessionId).toBe(sessionId);
    expect(request.afterSequence).toBe(afterSequence);
  });
});
