import { describe, expect, it } from "vitest";
import { classifyContent, downloadName, mediaTypeOf, sniffContent } from "@/lib/views/content";

const enc = (s: string) => new TextEncoder().encode(s);

describe("classifyContent", () => {
  it("recognises markdown with parameters", () => {
    expect(mediaTypeOf("Text/Markdown; charset=utf-8")).toBe("text/markdown");
    expect(classifyContent("text/markdown; charset=utf-8", enc("# Hi")).kind).toBe("markdown");
  });
  it("parses JSON and falls back to text when invalid", () => {
    expect(classifyContent("application/json", enc('{"a":1}'))).toMatchObject({ kind: "json", json: { a: 1 } });
    expect(classifyContent("application/vnd.x+json", enc("[1]")).kind).toBe("json");
    expect(classifyContent("application/json", enc("{oops")).kind).toBe("text");
  });
  it("never renders active content", () => {
    expect(classifyContent("text/html", enc("<script>alert(1)</script>")).kind).toBe("binary");
    expect(classifyContent("image/svg+xml", enc("<svg onload=alert(1)>")).kind).toBe("binary");
  });
  it("offers unknown and invalid text as downloads", () => {
    expect(classifyContent("application/pdf", enc("%PDF")).kind).toBe("binary");
    expect(classifyContent("", enc("x")).kind).toBe("binary");
    expect(classifyContent("text/plain", new Uint8Array([0xff, 0xfe])).kind).toBe("binary");
    expect(classifyContent("text/plain", enc("hello")).kind).toBe("text");
  });
  it("sniffs untyped blobs", () => {
    expect(sniffContent(enc('{"ok":true}')).kind).toBe("json");
    expect(sniffContent(enc("plain")).kind).toBe("text");
    expect(sniffContent(new Uint8Array([0xc3, 0x28])).kind).toBe("binary");
  });
  it("makes safe download names", () => {
    expect(downloadName("context-12", "text/markdown")).toBe("context-12.md");
    expect(downloadName("../../etc/passwd", "text/html")).toBe("..-..-etc-passwd.html.txt");
    expect(downloadName("x", "application/x-unknown")).toBe("x.bin");
  });
});
