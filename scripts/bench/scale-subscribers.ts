// Subscriber child of `npm run bench:scale`: StreamSession subscribers that
// subscribe to a session from its start and then never read, each on its own
// HTTP/2 connection (so each has its own flow-control window): the hostile
// client of issue 9. Raw node:http2 gRPC framing, paused right after the
// subscribe frame is written, so HTTP/2 flow control really pushes back.
import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { StreamSessionRequestSchema } from "@/lib/gen/macp/v1/core_pb";
import { errorText, type SubscriberCommand, type SubscriberReply } from "./scale-common";

const reply = (m: SubscriberReply) => process.send?.(m);
let open: { session: http2.ClientHttp2Session; req: http2.ClientHttp2Stream }[] = [];
let received = 0;

function subscribe(
  url: string,
  identity: string,
  sessionId: string,
): Promise<{ session: http2.ClientHttp2Session; req: http2.ClientHttp2Stream }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", () => undefined);
    const req = session.request({
      ":method": "POST",
      ":path": "/macp.v1.MACPRuntimeService/StreamSession",
      "content-type": "application/grpc+proto",
      te: "trailers",
      authorization: `Bearer ${identity}`,
    });
    req.on("error", () => undefined);
    const msg = toBinary(StreamSessionRequestSchema, create(StreamSessionRequestSchema, { subscribeSessionId: sessionId }));
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt32BE(msg.length, 1);
    Buffer.from(msg).copy(frame, 5);
    req.write(frame);
    req.pause();
    req.on("data", (d: Buffer) => (received += d.length)); // only what arrived before the pause took effect
    req.once("response", (h) => {
      if (h[":status"] !== 200) reject(new Error(`HTTP ${h[":status"]}`));
      else resolve({ session, req });
    });
    req.once("close", () => reject(new Error("stream closed before the response")));
  });
}

process.on("message", (m: SubscriberCommand) => {
  if (m.type === "exit") process.exit(0);
  if (m.type === "subscribe") {
    Promise.all(Array.from({ length: m.count }, () => subscribe(m.url, m.identity, m.sessionId))).then(
      (streams) => {
        open.push(...streams);
        reply({ type: "subscribed", id: m.id, streams: open.length });
      },
      (e: unknown) => reply({ type: "failed", id: m.id, error: errorText(e) }),
    );
    return;
  }
  for (const { session, req } of open) {
    req.close(http2.constants.NGHTTP2_CANCEL);
    session.destroy();
  }
  open = [];
  reply({ type: "left", id: m.id, bytesReceived: received });
});
reply({ type: "ready" });
