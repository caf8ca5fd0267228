// @vitest-environment happy-dom
// The session page's "Last activity" is the list row's (issue 12, item 9):
// the same rule (lib/macp/projections/activity.ts) over the same facts.

import { create } from "@bufbuild/protobuf";
import { cleanup, render } from "@testing-library/react";
import { afterEach, expect, it } from "vitest";
import { ParticipantActivitySchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { toSummary } from "@/lib/macp/projections/summary";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { SID, eventMsg, metadata, offer, start } from "@/lib/views/test/fixtures";
import { SessionHeader } from "@/features/session/SessionHeader";
import { WithAppRouter } from "@/lib/client/test/app-router";

afterEach(cleanup);

it("shows the list row's last activity: an agent's clock behind the runtime's receipt does not make them differ", () => {
  const envs = [start(), offer("h1", "bob")];
  const view = applySubscribeBatch(
    beginConnection(initialSessionStreamState(SID)),
    envs.map((e, i) => eventMsg(i + 1, e)),
  ).state.view;
  const eventsMs = view.lastActivityMs ?? 0;
  // The runtime received the last message ten minutes after the sender's own timestamp.
  const md = metadata(SessionState.EXPIRED);
  md.participantActivity = [
    create(ParticipantActivitySchema, { participantId: "alice", messageCount: 2, lastMessageAtUnixMs: BigInt(eventsMs + 600_000) }),
  ];
  const row = Number(toSummary(md, view, 2, eventsMs + 3_600_000).lastActivityUnixMs);
  expect(row).toBe(eventsMs + 600_000);

  const { getByTestId } = render(
    <WithAppRouter>
      <SessionHeader sessionId={SID} view={view} metadata={md} connection={{ state: "live", reconnects: 0 }} eventCount={2} />
    </WithAppRouter>,
  );
  const facts = getByTestId("session-facts");
  const shown = [...facts.querySelectorAll("dt")]
    .find((dt) => dt.textContent === "Last activity")
    ?.nextElementSibling?.querySelector("time");
  expect(shown?.getAttribute("datetime")).toBe(new Date(row).toISOString());
});
