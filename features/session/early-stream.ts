// The session page's live stream request, built by the server so that the
// browser can send it before it hydrates the page (lib/client/early-fetch.ts),
// before its Connect and protobuf code has come: the SubscribeSession call
// the live view would make, resuming after the first view's last sequence
// (`afterSequence`, 0 without a first view). It is built with Connect's own
// functions for the URL, the headers and the envelope, exactly as the
// browser's Connect transport builds it (binary codec, no timeout), so the
// transport's fetch recognises it by URL and body and takes its response
// over. early-stream.test.ts checks it against that transport.

import { create, toBinary } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { createMethodUrl, encodeEnvelope } from "@connectrpc/connect/protocol";
import { requestHeader } from "@connectrpc/connect/protocol-connect";
import { ConsoleService, SubscribeSessionRequestSchema } from "@/lib/gen/baton/v1/console_pb";
import type { EarlyRequest } from "@/lib/client/early-fetch";

export function earlySubscribeRequest(sessionId: string, afterSequence: bigint): EarlyRequest {
  const method = ConsoleService.method.subscribeSession;
  const message = toBinary(SubscribeSessionRequestSchema, create(SubscribeSessionRequestSchema, { sessionId, afterSequence }));
  return {
    url: createMethodUrl("/", method),
    headers: Object.fromEntries(requestHeader(method.methodKind, true, undefined, undefined, false)),
    body: base64Encode(encodeEnvelope(0, message)),
  };
}
