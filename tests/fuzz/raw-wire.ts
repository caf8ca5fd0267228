// gRPC by hand over HTTP/2: framing and unframing gRPC messages, and the
// raw client the fuzzer sends exact (possibly broken) bytes with, where the
// Connect client would refuse to send them.
import http2 from "node:http2";
import { concat } from "./fuzz-actions";

export interface RawOutcome {
  status: number;
  message: string;
  /** gRPC messages in the response body. */
  messages: Uint8Array[];
}

export function grpcFrame(body: Uint8Array, flag = 0, declared = body.length): Uint8Array {
  const h = new Uint8Array(5);
  h[0] = flag;
  new DataView(h.buffer).setUint32(1, declared);
  return concat(h, body);
}

function parseFrames(body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let o = 0;
  while (o + 5 <= body.length) {
    const len = new DataView(body.buffer, body.byteOffset + o + 1, 4).getUint32(0);
    out.push(body.subarray(o + 5, o + 5 + len));
    o += 5 + len;
  }
  if (o !== body.length) throw new Error(`response body has ${body.length - o} trailing bytes that are not a gRPC message`);
  return out;
}

export class RawWire {
  private session: http2.ClientHttp2Session | null = null;
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = http2.connect(this.url);
    s.on("error", () => undefined);
    s.unref();
    this.session = s;
    return s;
  }

  send(path: string, identity: string | null, body: Uint8Array, extraHeaders: Record<string, string> = {}): Promise<RawOutcome> {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...extraHeaders,
    };
    if (identity !== null) headers.authorization = `Bearer ${identity}`;
    const req = this.connect().request(headers);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status: number | null = null;
      let message = "";
      const timer = setTimeout(() => {
        req.close(http2.constants.NGHTTP2_CANCEL);
        reject(new Error(`no answer within ${this.timeoutMs} ms (hang)`));
      }, this.timeoutMs);
      const take = (h: http2.IncomingHttpHeaders) => {
        if (h["grpc-status"] === undefined) return;
        status = Number(h["grpc-status"]);
        message = decodeURIComponent(String(h["grpc-message"] ?? ""));
      };
      req.on("response", (h) => {
        const http = Number(h[":status"]);
        if (http !== 200) {
          clearTimeout(timer);
          reject(new Error(`HTTP status ${http} instead of a gRPC answer`));
        }
        take(h);
      });
      req.on("trailers", take);
      req.on("data", (d: Buffer) => chunks.push(d));
      req.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`stream error: ${e.message}`));
      });
      req.on("close", () => {
        clearTimeout(timer);
        if (status === null) return reject(new Error("the call ended without a grpc-status"));
        try {
          resolve({ status, message, messages: parseFrames(Buffer.concat(chunks)) });
        } catch (e) {
          reject(e);
        }
      });
      req.end(body);
    });
  }

  close(): void {
    this.session?.close();
  }
}

export const SEND = "/macp.v1.MACPRuntimeService/Send";
