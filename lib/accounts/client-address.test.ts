import { describe, expect, it } from "vitest";
import { clientAddress, ProxyConfigError, trustedProxyHops } from "./client-address";

const peer = "10.1.2.3";
const at = (xff: string | string[] | undefined, env: Record<string, string>) =>
  clientAddress({ remoteAddress: peer, headers: xff === undefined ? {} : { "x-forwarded-for": xff } }, env);

describe("clientAddress", () => {
  it("is the TCP peer unless proxies are trusted, whatever X-Forwarded-For says", () => {
    expect(at(undefined, {})).toBe(peer);
    expect(at("203.0.113.9", {})).toBe(peer);
    expect(at("203.0.113.9", { BATON_TRUST_PROXY: "0" })).toBe(peer);
  });

  it("counts trusted hops from the right: the client cannot choose its address by prepending entries", () => {
    const one = { BATON_TRUST_PROXY: "1" };
    expect(at("203.0.113.9", one)).toBe("203.0.113.9");
    expect(at("6.6.6.6, 203.0.113.9", one)).toBe("203.0.113.9");
    expect(at("1.1.1.1, 2.2.2.2, 3.3.3.3, 203.0.113.9", one)).toBe("203.0.113.9");
    // Two proxies: the outer one wrote the client, the inner one the outer proxy.
    const two = { BATON_TRUST_PROXY: "1", BATON_TRUSTED_PROXY_HOPS: "2" };
    expect(at("6.6.6.6, 203.0.113.9, 10.0.0.5", two)).toBe("203.0.113.9");
    expect(at("203.0.113.9, 10.0.0.5", two)).toBe("203.0.113.9");
    // Repeated headers are one list, in order.
    expect(at(["6.6.6.6", "203.0.113.9"], one)).toBe("203.0.113.9");
  });

  it("believes only IP addresses (ports and brackets stripped); anything else counts as the proxy", () => {
    const one = { BATON_TRUST_PROXY: "1" };
    expect(at("[2001:DB8::1]:443", one)).toBe("2001:db8::1");
    expect(at("2001:db8::2", one)).toBe("2001:db8::2");
    expect(at("203.0.113.9:5123", one)).toBe("203.0.113.9");
    expect(at("unknown", one)).toBe(peer);
    expect(at("<script>", one)).toBe(peer);
    expect(at(" , ", one)).toBe(peer);
    // Fewer entries than trusted hops: the first entry was written by a trusted proxy.
    expect(at("203.0.113.9", { BATON_TRUST_PROXY: "1", BATON_TRUSTED_PROXY_HOPS: "3" })).toBe("203.0.113.9");
  });

  it("refuses a malformed configuration", () => {
    expect(trustedProxyHops({})).toBe(0);
    expect(trustedProxyHops({ BATON_TRUST_PROXY: "1" })).toBe(1);
    expect(trustedProxyHops({ BATON_TRUST_PROXY: "1", BATON_TRUSTED_PROXY_HOPS: "3" })).toBe(3);
    for (const hops of ["0", "-1", "1.5", "x", "11"]) {
      expect(() => trustedProxyHops({ BATON_TRUST_PROXY: "1", BATON_TRUSTED_PROXY_HOPS: hops })).toThrow(ProxyConfigError);
    }
    expect(() => trustedProxyHops({ BATON_TRUST_PROXY: "yes" })).toThrow(/BATON_TRUST_PROXY must be 1 or 0/);
  });
});
