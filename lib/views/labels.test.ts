import { describe, expect, it } from "vitest";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { SESSION_STATE } from "@/lib/views/labels";

describe("SESSION_STATE", () => {
  it("holds exactly the generated SessionState's names and values", () => {
    const generated = Object.fromEntries(Object.entries(SessionState).filter(([k]) => Number.isNaN(Number(k))));
    expect({ ...SESSION_STATE }).toEqual(generated);
  });
});
