// @vitest-environment happy-dom
// "Also on the rotation": people by name besides the target, ticked into the
// session's participants; an id kept by a template that is not in the list
// stays as a row of its own so it can be cleared; the problem is shown under
// the group, which carries the field name for focus.

import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it } from "vitest";
import type { Directory, Person } from "@/lib/views/directory";
import { RotationField } from "@/features/hand-off/HandOffFields";

afterEach(cleanup);

const PEOPLE: Person[] = [
  { username: "bob", displayName: "Bob Ito", role: "operator", participantId: "human:bob", disabled: false },
  { username: "dave", displayName: "Dave Park", role: "operator", participantId: "human:dave", disabled: false },
  { username: "carol", displayName: "Carol Lee", role: "approver", participantId: "human:carol", disabled: false },
];
const DIRECTORY: Directory = { people: PEOPLE, agents: [], byParticipant: new Map(PEOPLE.map((p) => [p.participantId, p])) };

function Harness({ initial, target = "human:bob", error }: { initial: string[]; target?: string; error?: string }) {
  const [rotation, setRotation] = useState<string[]>(initial);
  return (
    <>
      <RotationField target={target} rotation={rotation} people={PEOPLE} directory={DIRECTORY} error={error} onChange={setRotation} />
      <output data-testid="value">{rotation.join(",")}</output>
    </>
  );
}

describe("RotationField", () => {
  it("lists everyone but the target by name and ticks them into the rotation", () => {
    render(<Harness initial={[]} />);
    expect(screen.getByRole("group", { name: /^Also on the rotation/ })).toBeTruthy();
    expect(screen.queryByTestId("hand-off-rotation-bob")).toBeNull();
    expect(screen.getByText(/if Bob Ito declines/)).toBeTruthy();
    const dave = screen.getByTestId("hand-off-rotation-dave") as HTMLInputElement;
    expect(dave.getAttribute("data-field")).toBe("rotation");
    fireEvent.click(dave);
    fireEvent.click(screen.getByTestId("hand-off-rotation-carol"));
    expect(screen.getByTestId("value").textContent).toBe("human:dave,human:carol");
    fireEvent.click(dave);
    expect(screen.getByTestId("value").textContent).toBe("human:carol");
  });

  it("keeps an id from a template that is not in the list as its own row, which clears it, and shows the problem", () => {
    render(<Harness initial={["agent://ops/pager"]} error="Choose at most 20 (21 chosen)." />);
    const other = screen.getByTestId("hand-off-rotation-other-0") as HTMLInputElement;
    expect(other.checked).toBe(true);
    expect(screen.getByText("Choose at most 20 (21 chosen).")).toBeTruthy();
    fireEvent.click(other);
    expect(screen.getByTestId("value").textContent).toBe("");
    expect(screen.queryByTestId("hand-off-rotation-other-0")).toBeNull();
  });
});
