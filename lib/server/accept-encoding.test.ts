import { describe, expect, it } from "vitest";
import { acceptedCodings, chooseEncoding, parseAcceptEncoding } from "./accept-encoding";

describe("Accept-Encoding negotiation", () => {
  it("parses names and q-values, ignoring malformed members", () => {
    const m = parseAcceptEncoding("gzip;q=0.5, BR , identity;q=0, *;q=0.1, bad name, deflate;q=2");
    expect(m.get("gzip")).toBe(0.5);
    expect(m.get("br")).toBe(1);
    expect(m.get("identity")).toBe(0);
    expect(m.get("*")).toBe(0.1);
    expect(m.has("bad name")).toBe(false);
    // q above 1 is not a valid weight: the member keeps the default.
    expect(m.get("deflate")).toBe(1);
  });

  it("prefers br, then gzip, as the browser allows", () => {
    expect(chooseEncoding("gzip, deflate, br, zstd", ["br", "gzip"])).toBe("br");
    expect(chooseEncoding("gzip, deflate", ["br", "gzip"])).toBe("gzip");
    expect(chooseEncoding("br;q=0.4, gzip;q=0.8", ["br", "gzip"])).toBe("gzip");
    expect(chooseEncoding("br;q=0, gzip", ["br", "gzip"])).toBe("gzip");
    expect(chooseEncoding("*", ["br", "gzip"])).toBe("br");
    expect(chooseEncoding("*;q=0.5, br;q=0", ["br", "gzip"])).toBe("gzip");
    expect(chooseEncoding("identity", ["br", "gzip"])).toBe("identity");
    expect(chooseEncoding("", ["br", "gzip"])).toBe("identity");
    expect(chooseEncoding(undefined, ["br", "gzip"])).toBe("identity");
    expect(chooseEncoding("br", ["gzip"])).toBe("identity");
  });

  it("lists what connect-node may use, best first, without weights", () => {
    expect(acceptedCodings("gzip, deflate, br", ["gzip"])).toEqual(["gzip"]);
    expect(acceptedCodings("gzip;q=0", ["gzip"])).toEqual([]);
    expect(acceptedCodings("gzip;q=0.2, br", ["br", "gzip"])).toEqual(["br", "gzip"]);
    expect(acceptedCodings("gzip, br;q=0.5", ["br", "gzip"])).toEqual(["gzip", "br"]);
    expect(acceptedCodings(undefined, ["gzip"])).toEqual([]);
  });
});
