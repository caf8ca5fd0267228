import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { policyCrc, recordCrc } from "./row-crc";
import { crc32 } from "./crc32";
import type { LogRecord } from "./types";

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("crc32", () => {
  it("matches the standard check values", () => {
    expect(crc32(ascii("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(ascii("a"))).toBe(0xe8b7be43);
    expect(crc32(ascii("The quick brown fox jumps over the lazy dog"))).toBe(0x414fa339);
    expect(crc32(new Uint8Array(32))).toBe(0x190a55ad);
    expect(crc32(new Uint8Array(32).fill(0xff))).toBe(0xff6cab0b);
  });

  it("continues across chunks", () => {
    const data = ascii("123456789");
    for (let cut = 0; cut <= data.length; cut++) {
      expect(crc32(data.subarray(cut), crc32(data.subarray(0, cut)))).toBe(0xcbf43926);
    }
  });

  it("agrees with zlib on random data", () => {
    let seed = 12345;
    for (let n = 0; n < 50; n++) {
      const buf = new Uint8Array(n * 37);
      for (let i = 0; i < buf.length; i++) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        buf[i] = seed >>> 24;
      }
      expect(crc32(buf)).toBe(zlib.crc32(buf));
    }
  });

  it("agrees with the bit-by-bit definition, from any starting value, on any view", () => {
    // The definition, one bit at a time (no table): what stored checksums were written with.
    const reference = (data: Uint8Array, previous: number): number => {
      let c = ~previous >>> 0;
      for (const byte of data) {
        c ^= byte;
        for (let bit = 0; bit < 8; bit++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      }
      return ~c >>> 0;
    };
    let seed = 777;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    for (let n = 0; n < 200; n++) {
      const backing = new Uint8Array(64).map(() => next() >>> 24);
      const start = next() % 32;
      const view = backing.subarray(start, start + (next() % 32));
      const previous = n % 4 === 0 ? 0 : next();
      expect(crc32(view, previous)).toBe(reference(view, previous));
    }
    // Empty inputs leave the value unchanged, whatever their backing buffer.
    for (const empty of [new Uint8Array(0), new TextEncoder().encode(""), new Uint8Array(new ArrayBuffer(0)), Buffer.alloc(0)]) {
      expect(crc32(empty, 0x8b8fc857)).toBe(0x8b8fc857);
    }
  });
});

describe("record checksums", () => {
  const base: LogRecord = {
    sessionId: "s-1",
    kind: "envelope",
    seq: 1,
    recvMs: 1_700_000_000_123,
    envelope: new Uint8Array([1, 2, 3]),
    boundPolicy: new Uint8Array([9]),
  };

  it("changes when any field changes", () => {
    const variants: LogRecord[] = [
      { ...base, sessionId: "s-2" },
      { ...base, kind: "cancel" },
      { ...base, seq: 2 },
      { ...base, recvMs: base.recvMs + 1 },
      { ...base, recvMs: base.recvMs + 0x1_0000_0000 },
      { ...base, envelope: new Uint8Array([1, 2, 4]) },
      { ...base, boundPolicy: new Uint8Array([8]) },
      { ...base, boundPolicy: undefined },
      { ...base, boundPolicy: new Uint8Array(0) },
    ];
    const crcs = new Set([recordCrc(base), ...variants.map(recordCrc)]);
    expect(crcs.size).toBe(variants.length + 1);
  });

  it("separates fields unambiguously", () => {
    // Moving bytes between the session id and the envelope must not collide.
    const a = recordCrc({ ...base, sessionId: "ab", envelope: ascii("c"), boundPolicy: undefined });
    const b = recordCrc({ ...base, sessionId: "a", envelope: ascii("bc"), boundPolicy: undefined });
    expect(a).not.toBe(b);
    expect(policyCrc({ policyId: "p1", descriptor: ascii("x") })).not.toBe(policyCrc({ policyId: "p", descriptor: ascii("1x") }));
  });

  it("is deterministic", () => {
    expect(recordCrc({ ...base })).toBe(recordCrc({ ...base, envelope: new Uint8Array([1, 2, 3]) }));
  });
});
