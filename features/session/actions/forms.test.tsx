// @vitest-environment happy-dom
// The action forms' shared sequence (lib/client/use-action-form.ts) as a
// person meets it: problems next to the fields, focus on the first invalid
// one, a confirmation before a final action, nothing sent while a problem
// stands. Rendered with Testing Library; the send path is covered end to end
// by the e2e specs against the real app.

import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { emptySessionView } from "@/lib/macp/projections/session";
import { validateReason, validateTaskFail } from "@/lib/client/action-forms";
import { CancelForm } from "@/features/session/actions/CancelForm";
import type { SessionFormProps } from "@/features/session/actions/FormShell";
import { RespondForm } from "@/features/session/actions/HandoffForms";
import { TaskFailForm } from "@/features/session/actions/TaskForms";

afterEach(cleanup);

function props(mode = HANDOFF_MODE): SessionFormProps & { onClose: ReturnType<typeof vi.fn>; onDone: ReturnType<typeof vi.fn> } {
  const view = { ...emptySessionView("01JTESTSESSION000000000001", mode), intent: "payments-api on-call", participants: ["alice", "bob"] };
  return {
    sessionId: view.sessionId,
    view,
    me: { role: "operator", participantId: "alice" },
    ctx: {},
    nameOf: (id: string) => id.toUpperCase(),
    onClose: vi.fn(),
    onDone: vi.fn(),
  };
}

/** Focus moves after the problems render (one animation frame). */
async function nextFrame(): Promise<void> {
  await act(() => new Promise<void>((r) => requestAnimationFrame(() => r())));
}

describe("the form sequence", () => {
  it("shows every problem next to its field, focuses the first, and sends nothing", async () => {
    const p = props(TASK_MODE);
    render(<TaskFailForm {...p} />);
    const expected = validateTaskFail({ errorCode: "", reason: "", retryable: false });
    if (expected.ok) throw new Error("an empty failure report must be refused");
    // As in a browser, pressing the button moves focus to it (away from the field the form opened on).
    screen.getByTestId("task-fail-form-submit").focus();
    fireEvent.click(screen.getByTestId("task-fail-form-submit"));
    await nextFrame();
    expect(screen.getByText(expected.errors.reason ?? "")).toBeTruthy();
    const code = screen.getByLabelText(/Error code/);
    const reason = screen.getByLabelText(/What went wrong/);
    expect(reason.getAttribute("aria-invalid")).toBe("true");
    // The first invalid field in the form's order has focus.
    const firstInvalid = expected.errors.errorCode ? code : reason;
    expect(document.activeElement).toBe(firstInvalid);
    // Nothing was sent: no pending label, no result line, the form is still open.
    expect(screen.getByTestId("task-fail-form-submit").textContent).toBe("Report failure");
    expect(p.onDone).not.toHaveBeenCalled();
  });

  it("clears the problems once the fields are fixed", async () => {
    const p = props();
    render(<RespondForm {...p} kind="decline" />);
    const expected = validateReason("", true);
    if (expected.ok) throw new Error("declining needs a reason");
    screen.getByTestId("decline-form-submit").focus();
    fireEvent.click(screen.getByTestId("decline-form-submit"));
    await nextFrame();
    const reason = screen.getByLabelText(/Reason/);
    expect(screen.getByText(expected.errors.reason ?? "")).toBeTruthy();
    expect(document.activeElement).toBe(reason);
    fireEvent.change(reason, { target: { value: "x".repeat(5000) } });
    const tooLong = validateReason("x".repeat(5000), true);
    fireEvent.click(screen.getByTestId("decline-form-submit"));
    await nextFrame();
    if (tooLong.ok) expect(screen.queryByText(expected.errors.reason ?? "")).toBeNull();
    else expect(screen.getByText(tooLong.errors.reason ?? "")).toBeTruthy();
  });

  it("asks before a final action, and Close on the confirmation sends nothing", async () => {
    const p = props();
    render(<CancelForm {...p} />);
    const dialog = screen.getByTestId("cancel-confirm");
    expect(dialog.hasAttribute("open")).toBe(false);
    expect(screen.queryByText("Cancel this session?")).toBeNull();
    fireEvent.click(screen.getByTestId("cancel-form-submit"));
    await waitFor(() => expect(dialog.hasAttribute("open")).toBe(true));
    expect(screen.getByText("Cancel this session?")).toBeTruthy();
    expect(dialog.textContent).toContain("payments-api on-call");
    fireEvent.click(screen.getByRole("button", { name: "Go back" }));
    await waitFor(() => expect(dialog.hasAttribute("open")).toBe(false));
    expect(screen.queryByText("Cancel this session?")).toBeNull();
    // Submitting again asks again: the attempt was not sent.
    expect(screen.getByTestId("cancel-form-submit").textContent).toBe("Review and cancel…");
    expect(p.onDone).not.toHaveBeenCalled();
  });

  it("Escape closes the form and Close hands it back", () => {
    const p = props();
    render(<CancelForm {...p} />);
    fireEvent.keyDown(screen.getByTestId("cancel-form"), { key: "Escape" });
    expect(p.onClose).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    expect(p.onClose).toHaveBeenCalledTimes(2);
  });
});
