// Unary gRPC calls over one node:http2 connection, framed by hand
// (protobuf-es encoding, the 5-byte gRPC message prefix, status from the
// trailers): what bulk seeders use to write many sessions into a runtime
// fast. A full client library costs several times the CPU per call, and the
// seeders share two cores with the runtime and console they load. Used by the
// e2e seeder (e2e/support/bulk-seed.ts) and the scale benchmark's seeder
// (scripts/bench/scale-seed.ts).
import http2 from "node:http2";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";

/** A gRPC call that ended with a non-OK status. */
export class GrpcStatusError extends Error {
  constructor(
    readonly path: string,
    /** The grpc-status (undefined when the server sent none). */
    readonly status: number | undefined,
    readonly grpcMessage: string,
  ) {
    super(`${path}: gRPC status ${status ?? "none"}: ${grpcMessage}`);
  }
}

/** Times a refused stream is sent again before the call fails. */
const REFUSED_RETRIES = 10;

export class GrpcUnaryClient {
  private readonly session: http2.ClientHttp2Session;

  constructor(url: string) {
    this.session = http2.connect(url);
    // Errors surface on each call's stream; an idle connection error must not crash the process.
    this.session.on("error", () => undefined);
  }

  /**
   * POST `path` (e.g. "/macp.v1.MACPRuntimeService/Send") with `init` encoded
   * as `input`, decode the reply as `output`. `authorization` is sent as is
   * (e.g. "Bearer agent://x"). Rejects with GrpcStatusError unless the status is 0.
   */
  async call<I extends DescMessage, O extends DescMessage>(
    path: string,
    input: I,
    init: MessageInitShape<I>,
    output: O,
    authorization: string,
  ): Promise<MessageShape<O>> {
    // A stream the server refused (NGHTTP2_REFUSED_STREAM: e.g. a busy
    // server's HTTP/2 session memory is full) was not processed: send it again.
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(path, input, init, output, authorization);
      } catch (err) {
        const refused =
          err instanceof Error &&
          (err as NodeJS.ErrnoException).code === "ERR_HTTP2_STREAM_ERROR" &&
          err.message.includes("NGHTTP2_REFUSED_STREAM");
        if (!refused || attempt >= REFUSED_RETRIES) throw err;
        await new Promise((r) => setTimeout(r, 50 * 2 ** Math.min(attempt, 6) * (0.5 + Math.random())));
      }
    }
  }

  private once<I extends DescMessage, O extends DescMessage>(
    path: string,
    input: I,
    init: MessageInitShape<I>,
    output: O,
    authorization: string,
  ): Promise<MessageShape<O>> {
    const body = toBinary(input, create(input, init));
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    frame.set(body, 5);
    return new Promise((resolve, reject) => {
      const req = this.session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc+proto",
        te: "trailers",
        authorization,
      });
      const chunks: Buffer[] = [];
      let status: number | undefined;
      let message = "";
      const meta = (h: http2.IncomingHttpHeaders): void => {
        if (h["grpc-status"] !== undefined) {
          status = Number(h["grpc-status"]);
          message = decodeURIComponent(String(h["grpc-message"] ?? ""));
        }
      };
      req.on("response", meta);
      req.on("trailers", meta);
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("error", reject);
      req.on("close", () => {
        if (status !== 0) return reject(new GrpcStatusError(path, status, message));
        const buf = Buffer.concat(chunks);
        if (buf.length < 5 || buf.length < 5 + buf.readUInt32BE(1)) {
          return reject(new GrpcStatusError(path, status, `truncated reply (${buf.length} bytes)`));
        }
        try {
          resolve(fromBinary(output, buf.subarray(5, 5 + buf.readUInt32BE(1))));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      req.end(frame);
    });
  }

  close(): void {
    this.session.close();
  }
}
