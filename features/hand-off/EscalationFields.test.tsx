// @vitest-environment happy-dom
// The hand-off dialog's escalation group: its minutes fields appear with the
// steps they belong to, carry their field names for focus, and report edits
// under the right key.

import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Errors, HandOffValues } from "@/lib/client/action-forms";
import type { Person } from "@/lib/views/directory";
import { EscalationFields } from "@/features/hand-off/EscalationFields";

afterEach(cleanup);

const PEOPLE: Person[] = [
  { username: "lee", displayName: "Lee Park", role: "approver", participantId: "human:lee", disabled: false },
  { username: "bob", displayName: "Bob Ito", role: "operator", participantId: "human:bob", disabled: false },
];

const BASE = {
  target: "human:bob",
  escalate: false,
  escalateNotify: [],
  escalateNotifyMinutes: "15",
  escalateReofferTo: "",
  escalateReofferMinutes: "15",
} as unknown as HandOffValues;

function Harness({ errors = {}, onSet }: { errors?: Errors; onSet?: (key: string, value: unknown) => void }) {
  const [v, setV] = useState<HandOffValues>(BASE);
  return (
    <EscalationFields
      v={v}
      errors={errors}
      approvers={PEOPLE.slice(0, 1)}
      people={PEOPLE}
      set={(key, value) => {
        onSet?.(key, value);
        setV((prev) => ({ ...prev, [key]: value }));
      }}
      onToggle={(on) => setV((prev) => ({ ...prev, escalate: on }))}
    />
  );
}

describe("EscalationFields", () => {
  it("shows the steps only when escalation is on, and the re-offer minutes only with someone to re-offer to", () => {
    render(<Harness />);
    expect(screen.queryByTestId("hand-off-escalate-notify-minutes")).toBeNull();
    fireEvent.click(screen.getByTestId("hand-off-escalate"));
    const notify = screen.getByTestId("hand-off-escalate-notify-minutes") as HTMLInputElement;
    expect(notify.value).toBe("15");
    expect(notify.getAttribute("data-field")).toBe("escalateNotifyMinutes");
    expect(screen.getByLabelText("after this many minutes unanswered")).toBe(notify);
    expect(screen.queryByTestId("hand-off-escalate-reoffer-minutes")).toBeNull();
    // The target is not offered as the one to re-offer to.
    const options = [...(screen.getByTestId("hand-off-escalate-reoffer") as HTMLSelectElement).options].map((o) => o.value);
    expect(options).toEqual(["", "human:lee"]);
    fireEvent.change(screen.getByTestId("hand-off-escalate-reoffer"), { target: { value: "human:lee" } });
    const reoffer = screen.getByTestId("hand-off-escalate-reoffer-minutes");
    expect(reoffer.getAttribute("data-field")).toBe("escalateReofferMinutes");
    expect(screen.getByLabelText("after this many more minutes")).toBe(reoffer);
  });

  it("each minutes field edits its own value", () => {
    const onSet = vi.fn();
    render(<Harness onSet={onSet} />);
    fireEvent.click(screen.getByTestId("hand-off-escalate"));
    fireEvent.change(screen.getByTestId("hand-off-escalate-reoffer"), { target: { value: "human:lee" } });
    fireEvent.change(screen.getByTestId("hand-off-escalate-notify-minutes"), { target: { value: "5" } });
    fireEvent.change(screen.getByTestId("hand-off-escalate-reoffer-minutes"), { target: { value: "30" } });
    expect(onSet).toHaveBeenCalledWith("escalateNotifyMinutes", "5");
    expect(onSet).toHaveBeenCalledWith("escalateReofferMinutes", "30");
    expect((screen.getByTestId("hand-off-escalate-notify-minutes") as HTMLInputElement).value).toBe("5");
    expect((screen.getByTestId("hand-off-escalate-reoffer-minutes") as HTMLInputElement).value).toBe("30");
  });

  it("marks a refused minutes field invalid and says why", () => {
    const { rerender } = render(<Harness />);
    fireEvent.click(screen.getByTestId("hand-off-escalate"));
    rerender(<Harness errors={{ escalateNotifyMinutes: "Between 1 and 1440 minutes." }} />);
    expect(screen.getByTestId("hand-off-escalate-notify-minutes").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByText("Between 1 and 1440 minutes.")).toBeTruthy();
  });
});
