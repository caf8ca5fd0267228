// Serve a Connect-style service implementation on @grpc/grpc-js.
//
// The runtime's service logic (server.ts) is written once against Connect's
// handler signatures. Agents only ever speak gRPC to the runtime, and on these
// machines @grpc/grpc-js handles a call with a fraction of connect-node's CPU
// (see the README's benchmark figures), so by default the agent-facing port is
// hosted here: each method is adapted generically — unary, server-streaming
// and bidirectional — with protobuf-es doing (de)serialisation, Connect error
// codes mapped 1:1 onto gRPC status codes (they share numbers), request
// metadata exposed as Headers, cancellation as the context's AbortSignal, and
// HTTP/2 flow control respected on every write.
//
// Flow control, precisely: a grpc-js call is an object-mode Writable whose
// write() only reports "full" after 16 queued messages, and a message's write
// completes only when HTTP/2 has sent it (the peer's window allows it). So
// for a peer that stops reading, write()'s return value alone would let 16
// messages (16 MB of 1 MB envelopes) pile up per stream below the runtime's
// own bounded buffers. pump() therefore counts what it has handed to grpc-js
// and not yet seen completed, and pulls the next message from the service
// only while that stays under MAX_IN_FLIGHT_BYTES (one message always fits).
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createHandlerContext,
  createServiceImplSpec,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import type { DescMethod, DescService } from "@bufbuild/protobuf";

type AnyImpl = (req: unknown, ctx: HandlerContext) => unknown;

/** Messages marked by encodeOnce(): null until first encoded, then their bytes. */
const sharedEncodings = new WeakMap<object, Buffer | null>();

/**
 * Mark a response message that is written unchanged to many streams (one
 * fan-out envelope for every subscriber): the grpc-js host then encodes it
 * once and reuses the bytes. Only for messages never mutated afterwards.
 * Returns the message; servers other than this host ignore the mark.
 */
export function encodeOnce<T extends object>(msg: T): T {
  if (!sharedEncodings.has(msg)) sharedEncodings.set(msg, null);
  return msg;
}

/**
 * Mark a response message whose encoding is already known (for example,
 * assembled from stored bytes): this host writes `bytes` instead of encoding
 * it. Only this host honours the mark, so only hand such messages to it.
 */
export function encodedAs<T extends object>(msg: T, bytes: Uint8Array): T {
  sharedEncodings.set(msg, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return msg;
}

/** protobuf-es bytes as a Buffer without copying them (toBinary returns a fresh array). */
function encode(schema: DescMessage, msg: unknown): Buffer {
  const u = toBinary(schema, msg as MessageShape<DescMessage>);
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

function encodeResponse(schema: DescMessage, msg: unknown): Buffer {
  if (msg instanceof Encoded) return msg.bytes;
  const cached = sharedEncodings.get(msg as object);
  if (cached) return cached;
  const b = encode(schema, msg);
  if (cached === null) sharedEncodings.set(msg as object, b);
  return b;
}

/**
 * Stands in for a request whose bytes are not a valid message of the method's
 * input type. grpc-js answers a throwing deserializer with INTERNAL ("Error
 * deserializing request"), as if the server were at fault; the handlers answer
 * this one with INVALID_ARGUMENT and the MACP code instead.
 */
class MalformedRequest {
  readonly error: ConnectError;
  constructor(input: DescMessage, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    this.error = new ConnectError(`INVALID_ENVELOPE: the request is not a valid ${input.typeName}: ${reason}`, Code.InvalidArgument);
  }
}

function decodeRequest(input: DescMessage, buf: Buffer): unknown {
  try {
    return fromBinary(input, buf);
  } catch (e) {
    return new MalformedRequest(input, e);
  }
}
/** A response already serialised by pump() (to know its size before writing it). */
class Encoded {
  constructor(readonly bytes: Buffer) {}
}

/** Bytes of responses handed to grpc-js whose write has not completed, per stream. */
export const MAX_IN_FLIGHT_BYTES = 256 * 1024;
/** Messages likewise (grpc-js's own object-mode high-water mark). */
const MAX_IN_FLIGHT_MESSAGES = 16;

function headersFrom(md: grpc.Metadata): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(md.getMap())) {
    if (typeof v === "string") h.append(k, v);
    else h.append(k, Buffer.from(v).toString("base64"));
  }
  return h;
}

function statusOf(err: unknown): Partial<grpc.StatusObject> & { code: grpc.status; details: string } {
  const ce = ConnectError.from(err);
  if (ce.code === Code.Internal || ce.code === Code.Unknown) {
    if (!(err instanceof ConnectError)) return { code: grpc.status.INTERNAL, details: `internal error: ${ce.rawMessage}` };
  }
  return { code: ce.code as number as grpc.status, details: ce.rawMessage };
}

function serviceError(err: unknown): grpc.ServiceError {
  const s = statusOf(err);
  return Object.assign(new Error(s.details), { code: s.code, details: s.details, metadata: new grpc.Metadata() });
}

/**
 * Async iterable over a readable call's messages; ends on half-close, cancel
 * or error, and throws (after the messages before it) at a malformed one.
 */
function requestsOf<T>(call: grpc.ServerDuplexStream<T, unknown>): AsyncIterable<T> {
  const queue: T[] = [];
  let done = false;
  let failure: ConnectError | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  call.on("data", (m: T) => {
    if (done) return;
    if (m instanceof MalformedRequest) {
      failure = m.error;
      done = true;
    } else queue.push(m);
    notify();
  });
  const finish = () => {
    done = true;
    notify();
  };
  call.on("end", finish);
  call.on("error", finish);
  call.on("cancelled", finish);
  call.on("close", finish);
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (queue.length > 0) {
          yield queue.shift() as T;
          continue;
        }
        if (failure) throw failure;
        if (done) return;
        await new Promise<void>((r) => (wake = r));
      }
    },
  };
}

/**
 * Write every output message with backpressure, then end the call (or fail
 * it); `finished` runs first. The next message is pulled from `output` only
 * once what is in flight (handed to grpc-js, not yet sent) is under
 * MAX_IN_FLIGHT_BYTES and MAX_IN_FLIGHT_MESSAGES.
 */
async function pump(
  call: grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>,
  output: AsyncIterable<unknown>,
  schema: DescMessage,
  finished: () => void,
): Promise<void> {
  let inFlightBytes = 0;
  let inFlightMessages = 0;
  let wake: (() => void) | null = null;
  const settle = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const gone = () => call.cancelled || call.destroyed;
  call.on("cancelled", settle);
  call.on("close", settle);
  try {
    for await (const msg of output) {
      if (gone()) break;
      const bytes = encodeResponse(schema, create(schema, msg as MessageShape<DescMessage>));
      inFlightBytes += bytes.length;
      inFlightMessages++;
      call.write(new Encoded(bytes), () => {
        inFlightBytes -= bytes.length;
        inFlightMessages--;
        settle();
      });
      while (!gone() && inFlightMessages > 0 && (inFlightBytes > MAX_IN_FLIGHT_BYTES || inFlightMessages >= MAX_IN_FLIGHT_MESSAGES)) {
        await new Promise<void>((resolve) => (wake = resolve));
      }
    }
    finished();
    if (!gone()) call.end();
  } catch (err) {
    finished();
    // Emitting 'error' makes grpc-js flush what was written, then send the status.
    if (!gone()) call.emit("error", serviceError(err));
  } finally {
    call.off("cancelled", settle);
    call.off("close", settle);
  }
}

export interface GrpcHostOptions {
  shutdownSignal?: AbortSignal;
}

/** Register `impl` for `service` on a grpc-js server. Methods left out answer UNIMPLEMENTED. */
export function addConnectService<S extends DescService>(
  server: grpc.Server,
  service: S,
  impl: Partial<ServiceImpl<S>>,
  opts: GrpcHostOptions = {},
): void {
  const spec = createServiceImplSpec(service, impl);
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  const implemented = new Set(Object.keys(impl));
  // Contexts of the calls still running. grpc-js reports 'cancelled' whenever a
  // call's HTTP/2 stream closes, after a normal completion too; so a context is
  // aborted only when its call is cancelled while still running, or on shutdown.
  // Per-call contexts link no long-lived signal (the shutdown signal reaches
  // them through this set), so a completed call that is never aborted leaves
  // no listener behind. (Aborting every completed call, with a ConnectError and
  // its stack trace through linked signals, cost ~10% of server CPU per Send.)
  type Ctx = ReturnType<typeof createHandlerContext>;
  const live = new Set<Ctx>();
  const shutdown = opts.shutdownSignal;
  shutdown?.addEventListener(
    "abort",
    () => {
      for (const ctx of live) ctx.abort(shutdown.reason);
      live.clear();
    },
    { once: true },
  );

  for (const m of Object.values(spec.methods)) {
    const method = m.method as DescMethod;
    if (!implemented.has(method.localName)) continue; // grpc-js answers UNIMPLEMENTED itself
    const input = method.input;
    const output = method.output;
    const kind = m.kind;
    const fn = m.impl as unknown as AnyImpl;
    definition[method.name] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: kind === "client_streaming" || kind === "bidi_streaming",
      responseStream: kind === "server_streaming" || kind === "bidi_streaming",
      requestSerialize: (msg: unknown) => encode(input, msg),
      requestDeserialize: (buf: Buffer) => decodeRequest(input, buf),
      // grpc-js copies these bytes into its own frame, so shared ones stay intact.
      responseSerialize: (msg: unknown) => encodeResponse(output, msg),
      responseDeserialize: (buf: Buffer) => fromBinary(output, buf),
    };
    const url = `/${service.typeName}/${method.name}`;
    const contextFor = (call: { metadata: grpc.Metadata; on(ev: "cancelled", f: () => void): unknown }): Ctx => {
      const ctx = createHandlerContext({
        service,
        method,
        protocolName: "grpc",
        requestMethod: "POST",
        url,
        requestHeader: headersFrom(call.metadata),
      });
      if (shutdown?.aborted) ctx.abort(shutdown.reason);
      else live.add(ctx);
      call.on("cancelled", () => {
        if (live.delete(ctx)) ctx.abort(new ConnectError("the client cancelled the call", Code.Canceled));
      });
      return ctx;
    };
    /** The call completed (response or status on its way): a later 'cancelled' is just the stream closing. */
    const finished = (ctx: Ctx) => () => void live.delete(ctx);

    switch (kind) {
      case "unary":
        handlers[method.name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          if (call.request instanceof MalformedRequest) return callback(serviceError(call.request.error));
          const ctx = contextFor(call);
          Promise.resolve()
            .then(() => fn(call.request, ctx))
            .then(
              (res) => {
                live.delete(ctx);
                callback(null, create(output, res as MessageShape<DescMessage>));
              },
              (err: unknown) => {
                live.delete(ctx);
                callback(serviceError(err));
              },
            );
        };
        break;
      case "server_streaming":
        handlers[method.name] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
          if (call.request instanceof MalformedRequest) return void call.emit("error", serviceError(call.request.error));
          const ctx = contextFor(call);
          let out: AsyncIterable<unknown>;
          try {
            out = fn(call.request, ctx) as AsyncIterable<unknown>;
          } catch (err) {
            live.delete(ctx);
            call.emit("error", serviceError(err));
            return;
          }
          void pump(call, out, output, finished(ctx));
        };
        break;
      case "bidi_streaming":
        handlers[method.name] = (call: grpc.ServerDuplexStream<unknown, unknown>) => {
          const ctx = contextFor(call);
          let out: AsyncIterable<unknown>;
          try {
            out = fn(requestsOf(call), ctx) as AsyncIterable<unknown>;
          } catch (err) {
            live.delete(ctx);
            call.emit("error", serviceError(err));
            return;
          }
          void pump(call, out, output, finished(ctx));
        };
        break;
      default:
        // No client-streaming RPCs exist in MACP; refuse rather than guess.
        handlers[method.name] = (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          void call;
          callback({ code: grpc.status.UNIMPLEMENTED, details: `${method.name} is not supported` });
        };
    }
  }
  server.addService(definition as grpc.ServiceDefinition, handlers);
}
