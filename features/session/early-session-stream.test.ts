// @vitest-environment happy-dom
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConsoleService, SubscribeSessionRequestSchema } from "@/lib/gen/baton/v1/console_pb";
import { connectEnvelope, hasEarly, takeEarly } from "@/lib/client/early-call";
import {
  RESUME_AFTER_ATTRIBUTE,
  SUBSCRIBE_SESSION_PATH,
  sendSessionStreamEarly,
  subscribeSessionMessage,
} from "@/features/session/early-session-stream";

afterEach(() => {
  vi.restoreAllMocks();
  document.body.innerHTML = "";
});

describe("subscribeSessionMessage", () => {
  it("encodes the same bytes as protobuf-es", () => {
    const ids = ["", "s", "0f2b4ead-ad5c-4238-8afb-25cf58d091b0", "é".repeat(100), "x".repeat(300)];
    const sequences = [0n, 1n, 127n, 128n, 1000n, 16_384n, 2n ** 53n + 1n, 2n ** 64n - 1n];
    for (const sessionId of ids)
      for (const afterSequence of sequences) {
        const expected = toBinary(SubscribeSessionRequestSchema, create(SubscribeSessionRequestSchema, { sessionId, afterSequence }));
        expect(subscribeSessionMessage(sessionId, afterSequence)).toEqual(expected);
      }
  });

  it("refuses a sequence that is not a uint64", () => {
    expect(() => subscribeSessionMessage("s", -1n)).toThrow(RangeError);
    expect(() => subscribeSessionMessage("s", 2n ** 64n)).toThrow(RangeError);
  });

  it("is the generated service's method path", () => {
    expect(SUBSCRIBE_SESSION_PATH).toBe(`/${ConsoleService.typeName}/${ConsoleService.method.subscribeSession.name}`);
  });
});

describe("sendSessionStreamEarly", () => {
  const origin = "http://console.test";
  const url = `${origin}${SUBSCRIBE_SESSION_PATH}`;

  it("sends the request the first view's handed-over state resumes from", () => {
    const sent: { url: string; init: RequestInit | undefined }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      sent.push({ url: String(input), init });
      return new Promise<Response>(() => undefined);
    });
    document.body.innerHTML = `<div ${RESUME_AFTER_ATTRIBUTE}="1000"></div>`;
    expect(sendSessionStreamEarly(document, origin, "s1")).toBe(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe(url);
    const body = sent[0]?.init?.body as Uint8Array;
    expect(fromBinary(SubscribeSessionRequestSchema, body.subarray(5))).toMatchObject({ sessionId: "s1", afterSequence: 1000n });
    expect(body).toEqual(connectEnvelope(subscribeSessionMessage("s1", 1000n)));
    expect(new Headers(sent[0]?.init?.headers).get("content-type")).toBe("application/connect+proto");
    // The live view's own request takes it.
    expect(takeEarly(url, connectEnvelope(subscribeSessionMessage("s1", 1000n)), undefined)).toBeDefined();
    expect(hasEarly(url)).toBe(false);
  });

  it("sends nothing without a handed-over state or with a malformed one", () => {
    const fetch = vi.spyOn(globalThis, "fetch");
    expect(sendSessionStreamEarly(document, origin, "s1")).toBe(false);
    for (const bad of ["", "-1", "1e3", "12abc", "18446744073709551616", "9".repeat(21)]) {
      document.body.innerHTML = `<div ${RESUME_AFTER_ATTRIBUTE}="${bad}"></div>`;
      expect(sendSessionStreamEarly(document, origin, "s1")).toBe(false);
    }
    expect(fetch).not.toHaveBeenCalled();
  });
});
