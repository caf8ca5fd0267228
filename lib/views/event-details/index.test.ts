import { describe, expect, it } from "vitest";
import { describeEvent, rawEnvelopeView } from "@/lib/views/event-details";
import { accept, commitment, context, decline, offer, start, taskEnv } from "@/lib/views/test/fixtures";
import { TASK_MODE } from "@/lib/macp/constants";

describe("describeEvent", () => {
  it("describes handoff events with actor, fields and reason", () => {
    const d = describeEvent({ envelope: offer("h1", "bob"), sequence: 2 });
    expect(d.title).toBe("Offer");
    // Issue 12: sentences name the scope and the people; the offer id stays in the fields.
    expect(d.summary).toBe("alice offered pager to bob");
    expect(d.fields).toContainEqual({ label: "Handoff id", value: "h1", mono: true });
    expect(d.fields).toContainEqual({ label: "Scope", value: "pager" });
    expect(d.reason).toBe("shift change");
    expect(describeEvent({ envelope: decline("h1", "bob") }).summary).toBe("bob declined the offer");
    expect(describeEvent({ envelope: accept("h2", "carol") }).tone).toBe("success");
  });

  it("names people by display name, and agents without their prefix, when given a resolver", () => {
    const names: Record<string, string> = { alice: "Alice Ng", bob: "Bob Ito" };
    const nameOf = (id: string) => names[id] ?? id.replace(/^agent:\/\//, "");
    expect(describeEvent({ envelope: offer("h1", "bob"), sequence: 2 }, nameOf).summary).toBe("Alice Ng offered pager to Bob Ito");
    expect(describeEvent({ envelope: decline("h1", "bob") }, nameOf).summary).toBe("Bob Ito declined the offer");
    // Without a resolver the same envelope reads with plain ids (a separate cache).
    expect(describeEvent({ envelope: offer("h1", "agent://oncall/bob"), sequence: 2 }).summary).toBe("alice offered pager to oncall/bob");
  });

  it("exposes context bytes with their content type", () => {
    const d = describeEvent({ envelope: context("h1", "# Runbook"), sequence: 3 });
    expect(d.context?.contentType).toBe("text/markdown");
    expect(new TextDecoder().decode(d.context?.bytes)).toBe("# Runbook");
    expect(d.context?.stem).toBe("context-3");
  });

  it("keeps a negative commitment outcome (defaults included)", () => {
    const d = describeEvent({ envelope: commitment("handoff.declined", false) });
    expect(d.outcome).toMatchObject({ positive: false, action: "handoff.declined" });
    expect(d.tone).toBe("danger");
  });

  it("describes task progress as a 0..1 fraction", () => {
    const d = describeEvent({ envelope: taskEnv.update(0.7) });
    expect(d.progress).toBeCloseTo(0.7);
    expect(d.summary).toBe("bob reported 70%: at 0.7");
    expect(describeEvent({ envelope: taskEnv.complete() }).blobs[0]?.label).toBe("Output");
  });

  it("marks undecodable payloads", () => {
    const e = offer("h1", "bob");
    const broken = { ...e, payload: new Uint8Array([0xff, 0xff, 0xff]) };
    expect(describeEvent({ envelope: broken }).decodeError).toBeDefined();
  });

  it("gives a raw view with header fields and decoded payload JSON", () => {
    const raw = rawEnvelopeView({ envelope: start(["alice", "bob"], TASK_MODE), sequence: 1 });
    expect(raw.header.find((h) => h.label === "message_type")?.value).toBe("SessionStart");
    expect(raw.payloadJson?.participants).toEqual(["alice", "bob"]);
    expect(raw.payloadJson?.ttl_ms).toBe(3_600_000);
  });
});
