// @vitest-environment happy-dom
// What the action panel offers, by the person's role and the session's state:
// the session is folded from real envelopes (the same fold the session page
// uses), the person is set in the real sign-in store, and the directory and
// capabilities are in the query cache as the page reads them from the server.
// decide() (lib/authz) is not replaced: what is offered is what it allows.

import { create } from "@bufbuild/protobuf";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ActionResultSchema, GetCapabilitiesResponseSchema, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { directoryFromPeople } from "@/lib/views/directory";
import type { WhoAmI } from "@/lib/views/sign-in";
import type { Role } from "@/lib/authz/roles";
import { SID, accept, commitment, eventMsg, metadata, offer, start, taskEnv } from "@/lib/views/test/fixtures";
import { queryKeys } from "@/lib/client/query-keys";
import { setWhoAmI } from "@/lib/client/use-whoami";
import { ActionPanel } from "@/features/session/actions/ActionPanel";

// The action service: a task update answers when the test says so; other calls never answer.
const updates: ((r: ActionResult) => void)[] = [];
vi.mock("@/lib/client/transport", async (original) => ({
  ...(await original<typeof import("@/lib/client/transport")>()),
  actionClient: () =>
    new Proxy(
      {},
      {
        get: (_, name) =>
          name === "taskUpdate"
            ? () => new Promise<ActionResult>((resolve) => updates.push(resolve))
            : () => new Promise<never>(() => undefined),
      },
    ),
}));

const PEOPLE = [
  { participantId: "alice", displayName: "Alice Ng", role: "operator" },
  { participantId: "bob", displayName: "Bob Ito", role: "operator" },
  { participantId: "carol", displayName: "Carol Diaz", role: "viewer" },
];

function person(participantId: string, role: Role): WhoAmI {
  const p = PEOPLE.find((x) => x.participantId === participantId);
  return {
    username: participantId,
    displayName: p?.displayName ?? participantId,
    role,
    participantId,
    authMethod: "password",
    mustChangePassword: false,
    csrfToken: "csrf-test",
    sessionEndsAt: 0,
  };
}

/** The panel for `me` on the session the envelopes make (sent by alice unless they say otherwise). */
function renderPanel(me: WhoAmI | null, envs: Envelope[], state = SessionState.OPEN) {
  const s = applySubscribeBatch(
    beginConnection(initialSessionStreamState(SID)),
    envs.map((e, i) => eventMsg(i + 1, e)),
  ).state;
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  client.setQueryData(queryKeys.directory, directoryFromPeople(PEOPLE));
  client.setQueryData(queryKeys.capabilities, create(GetCapabilitiesResponseSchema, { maxPayloadBytes: 1_048_576 }));
  act(() => setWhoAmI(me));
  // The session's time to live runs from now (the envelopes' own times are in 2023).
  const expiresAt = Date.now() + 3_600_000;
  const md = metadata(state, envs[0]?.mode === TASK_MODE ? { mode: TASK_MODE, expiresAt } : { expiresAt });
  return render(
    <QueryClientProvider client={client}>
      <ActionPanel sessionId={SID} view={s.view} metadata={md} />
    </QueryClientProvider>,
  );
}

/** The action buttons the panel shows, by test id ("action-accept", …). */
function offered(): string[] {
  return [...document.querySelectorAll("[data-testid^='action-'][data-allowed]")].map((b) => b.getAttribute("data-testid") ?? "");
}

afterEach(() => {
  cleanup();
  act(() => setWhoAmI(null));
});

describe("the action panel", () => {
  it("offers the target Accept and Decline on an open offer, and nothing that is the owner's", async () => {
    renderPanel(person("bob", "operator"), [start(), offer("h1", "bob")]);
    await waitFor(() => expect(offered()).toContain("action-accept"));
    expect(offered()).toContain("action-decline");
    for (const owners of ["action-commit", "action-offer", "action-cancel"]) expect(offered()).not.toContain(owners);
    expect(screen.getByTestId("action-accept").textContent).toBe("Accept…");
    // Pressing it opens the accept form for this offer, naming who offers it.
    fireEvent.click(screen.getByTestId("action-accept"));
    const form = screen.getByTestId("accept-form");
    expect(form.textContent).toContain("Alice Ng offers you");
    expect(screen.getByTestId("action-accept").getAttribute("aria-expanded")).toBe("true");
  });

  it("does not offer the owner the target's answer: she waits on Bob", async () => {
    renderPanel(person("alice", "operator"), [start(), offer("h1", "bob")]);
    await waitFor(() => expect(screen.getByTestId("action-panel")).toBeTruthy());
    expect(offered()).not.toContain("action-accept");
    expect(offered()).not.toContain("action-decline");
    expect(offered()).not.toContain("action-commit");
    expect(screen.getByTestId("waiting-on").getAttribute("data-waiting-on")).toBe("bob");
  });

  it("offers the owner Commit once the offer is accepted, and the target no longer answers", async () => {
    const envs = [start(), offer("h1", "bob"), accept("h1", "bob")];
    renderPanel(person("alice", "operator"), envs);
    await waitFor(() => expect(offered()).toContain("action-commit"));
    expect(offered()).not.toContain("action-accept");
    expect(screen.getByTestId("action-commit").textContent).toBe("Commit…");
    fireEvent.click(screen.getByTestId("action-commit"));
    expect(screen.getByTestId("commit-form").textContent).toContain("Bob Ito becomes the owner.");
    cleanup();

    renderPanel(person("bob", "operator"), envs);
    await waitFor(() => expect(screen.getByTestId("action-panel")).toBeTruthy());
    expect(offered()).not.toContain("action-accept");
    expect(offered()).not.toContain("action-decline");
    expect(offered()).not.toContain("action-commit");
  });

  it("shows a viewer no actions, and says why", async () => {
    renderPanel(person("carol", "viewer"), [start(), offer("h1", "bob")]);
    const note = await screen.findByTestId("read-only-note");
    expect(offered()).toEqual([]);
    expect(screen.queryAllByRole("button")).toEqual([]);
    expect(note.textContent).toContain("Watching as Carol Diaz (viewer): read-only, no actions.");
    expect(screen.getByTestId("action-panel").getAttribute("data-panel")).toBe("read-only");
  });

  it("shows no actions on a committed session, with the reason", async () => {
    renderPanel(person("alice", "operator"), [start(), offer("h1", "bob"), accept("h1", "bob"), commitment()], SessionState.RESOLVED);
    const note = await screen.findByTestId("closed-note");
    expect(offered()).toEqual([]);
    expect(note.textContent).toMatch(/^No actions: /);
    expect(screen.getByTestId("action-panel").getAttribute("data-panel")).toBe("closed");
  });

  it("offers a task's assignee Complete once it is taken, not its requester", async () => {
    const envs = [start(["alice", "bob"], TASK_MODE), taskEnv.request(), taskEnv.accept()];
    renderPanel(person("bob", "operator"), envs);
    await waitFor(() => expect(offered()).toContain("action-taskComplete"));
    expect(offered()).toContain("action-taskFail");
    expect(offered()).not.toContain("action-taskAccept");
    expect(offered()).not.toContain("action-commit");
    cleanup();

    renderPanel(person("alice", "operator"), envs);
    await waitFor(() => expect(screen.getByTestId("action-panel")).toBeTruthy());
    expect(offered()).not.toContain("action-taskComplete");
    expect(offered()).not.toContain("action-taskFail");
  });

  it("offers a new task's requester Request and Cancel, and nothing disabled (issue 12, problem 5)", async () => {
    renderPanel(person("alice", "operator"), [start(["alice", "bob"], TASK_MODE)]);
    await waitFor(() => expect(offered()).toContain("action-taskRequest"));
    expect(offered()).toEqual(["action-taskRequest", "action-cancel"]);
    expect(document.querySelectorAll("[aria-disabled='true'], button:disabled")).toHaveLength(0);
    cleanup();

    // The other participant has nothing to do yet: one line says whom the task waits for.
    renderPanel(person("bob", "operator"), [start(["alice", "bob"], TASK_MODE)]);
    const waiting = await screen.findByTestId("waiting-on");
    expect(offered()).toEqual([]);
    expect(screen.queryAllByRole("button")).toEqual([]);
    expect(waiting.textContent).toBe("Waiting for Alice Ng to request the task.");
  });

  it("asks a signed-out visitor to sign in, with no actions", () => {
    renderPanel(null, [start(), offer("h1", "bob")]);
    expect(screen.getByTestId("action-panel-signed-out").textContent).toContain("Sign in to act in this session.");
    expect(offered()).toEqual([]);
  });
  it("keeps the form a person opened while an earlier action was still being answered", async () => {
    renderPanel(person("bob", "operator"), [start(["alice", "bob"], TASK_MODE), taskEnv.request(), taskEnv.accept()]);
    fireEvent.click(await screen.findByTestId("action-taskUpdate"));
    fireEvent.change(screen.getByLabelText("Progress (%)"), { target: { value: "40" } });
    fireEvent.click(screen.getByTestId("task-update-form-submit"));
    await waitFor(() => expect(updates).toHaveLength(1));
    // The answer is slow; meanwhile Bob opens Complete.
    fireEvent.click(screen.getByTestId("action-taskComplete"));
    expect(screen.getByTestId("task-complete-form")).toBeTruthy();
    await act(async () => {
      updates[0]?.(create(ActionResultSchema, { ok: true }));
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    // The update's answer says so, and leaves the form Bob is in open.
    expect(await screen.findByTestId("action-done")).toBeTruthy();
    expect(screen.getByTestId("task-complete-form")).toBeTruthy();
  });
});
