import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { NotifyEvent } from "./events";
import { genericBody, sessionLink, signBody, slackBody, slackEscape } from "./messages";

const event: NotifyEvent = {
  kind: "offer.waiting",
  sessionId: "3cbaabb8-0000-4000-8000-000000000001",
  mode: "macp.mode.handoff.v1",
  intent: "Rotate <payments> & on-call",
  scope: "payments-api primary",
  from: "human:alice",
  to: ["human:bob"],
  waitingOn: ["human:bob"],
  outcome: "",
  detail: "",
  involved: ["human:alice", "human:bob"],
  occurredAtMs: Date.UTC(2026, 10, 26, 12, 0, 0),
};
const names = new Map([
  ["human:alice", "Alice Ng"],
  ["human:bob", "Bob"],
]);
const nameOf = (id: string) => names.get(id);

describe("signBody", () => {
  it("is the hex HMAC-SHA256 of the raw body, prefixed sha256=", () => {
    const body = '{"event":"offer.waiting","session_id":"s-1"}';
    const expected = createHmac("sha256", "a-secret-of-16-chars+").update(Buffer.from(body, "utf8")).digest("hex");
    expect(signBody("a-secret-of-16-chars+", body)).toBe(`sha256=${expected}`);
    expect(signBody("a-secret-of-16-chars+", body)).toMatch(/^sha256=[0-9a-f]{64}$/);
    // One changed byte, or another key, changes it.
    expect(signBody("a-secret-of-16-chars+", body.replace("s-1", "s-2"))).not.toBe(`sha256=${expected}`);
    expect(signBody("another-secret-of-16", body)).not.toBe(`sha256=${expected}`);
  });
});

describe("genericBody", () => {
  it("carries the event's fields, names and a link back", () => {
    const b = JSON.parse(genericBody(event, "https://baton.example.com/", nameOf));
    expect(b).toEqual({
      event: "offer.waiting",
      session_id: event.sessionId,
      mode: "macp.mode.handoff.v1",
      intent: "Rotate <payments> & on-call",
      scope: "payments-api primary",
      from: "human:alice",
      to: ["human:bob"],
      waiting_on: ["human:bob"],
      outcome: "",
      detail: "",
      occurred_at: "2026-11-26T12:00:00.000Z",
      url: `https://baton.example.com/sessions/${event.sessionId}`,
      names: { "human:alice": "Alice Ng", "human:bob": "Bob" },
    });
  });
});

describe("slackBody", () => {
  it("names people, escapes mrkdwn and links to the session", () => {
    const b = JSON.parse(slackBody(event, "https://baton.example.com", nameOf));
    const url = sessionLink("https://baton.example.com", event.sessionId);
    expect(b.text).toBe(`Alice Ng offered payments-api primary to Bob: waiting for an answer <${url}|Open in Baton>`);
    expect(b.blocks).toEqual([
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: "*Alice Ng offered payments-api primary to Bob: waiting for an answer*\nRotate &lt;payments&gt; &amp; on-call\nWaiting on: Bob",
        },
      },
      { type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: "Open session" }, url }] },
    ]);
  });
  it("falls back to ids for unknown participants", () => {
    const b = JSON.parse(slackBody({ ...event, kind: "approval.needed", to: ["human:carol", "agent://x"] }, "http://h", nameOf));
    expect(b.text).toContain("Alice Ng's handoff of payments-api primary needs approval from human:carol and agent://x");
  });
  it("escapes & < >", () => expect(slackEscape("a<b>&c")).toBe("a&lt;b&gt;&amp;c"));
});
