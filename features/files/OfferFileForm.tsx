"use client";
// "Offer a handoff": writes a new v0.1 file (status offered) into a watched
// directory, from the signed-in person's participant id. Context is a few
// key = value lines, like the reference CLI's --context k=v.

import { useId, useState } from "react";
import type { FileHandoffDirectory } from "@/lib/gen/baton/v1/files_pb";
import { fileHref } from "@/lib/views/file-handoffs";
import { fileClient } from "@/lib/client/transport";
import { useFileAction } from "@/lib/client/use-file-handoffs";
import { useFormSequence } from "@/lib/client/use-action-form";
import { Button, Field, Select, TextArea, TextInput } from "@/components/ui/forms";
import { FileResultLine } from "@/features/files/FileBits";
import Link from "next/link";

/** "k=v" lines → a map; the line numbers of lines that are not k=v. */
export function parseContextLines(text: string): { context: Record<string, string>; bad: number[] } {
  const context: Record<string, string> = {};
  const bad: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const eq = line.indexOf("=");
    if (eq <= 0) bad.push(i + 1);
    else context[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  });
  return { context, bad };
}

export function OfferFileForm({ directories, initialDir }: { directories: readonly FileHandoffDirectory[]; initialDir?: string }) {
  const id = useId();
  const [dirKey, setDirKey] = useState(
    initialDir && directories.some((d) => d.key === initialDir) ? initialDir : (directories[0]?.key ?? ""),
  );
  const [description, setDescription] = useState("");
  const [to, setTo] = useState("");
  const [contextText, setContextText] = useState("");
  const action = useFileAction("Handoff offered");
  const { state } = action;

  const form = useFormSequence({
    validate: () => {
      const { context, bad } = parseContextLines(contextText);
      if (description.trim() === "") return { ok: false, errors: { description: "Describe the work to hand off." } };
      if (bad.length > 0) return { ok: false, errors: { context: `Line ${bad.join(", ")}: write each entry as key=value.` } };
      return { ok: true, value: { dirKey, description, to: to.trim(), context } };
    },
    send: async (fields) => {
      const outcome = await action.submit(fields, (messageId) =>
        fileClient().offerFileHandoff({
          dirKey: fields.dirKey,
          description: fields.description,
          toAgent: fields.to,
          context: fields.context,
          messageId,
        }),
      );
      if (outcome?.kind === "ok") {
        setDescription("");
        setTo("");
        setContextText("");
      }
      return outcome;
    },
    // Focus stays where it is; the server's refusal is read from the outcome below.
    focus: () => {},
    serverErrors: () => null,
  });
  const fieldError = (f: string): string | undefined =>
    form.errors[f] ??
    (state.outcome?.kind === "invalid" && state.outcome.field.replace("to_agent", "to") === f ? state.outcome.description : undefined);
  const made = state.outcome?.kind === "ok" ? state.result?.handoff : undefined;

  return (
    <form onSubmit={form.onSubmit} className="space-y-3" noValidate aria-label="Offer a handoff" data-testid="offer-file-form">
      {directories.length > 1 ? (
        <Field id={`${id}-dir`} label="Directory">
          <Select id={`${id}-dir`} value={dirKey} onChange={(e) => setDirKey(e.target.value)}>
            {directories.map((d) => (
              <option key={d.key} value={d.key}>
                {d.path}
              </option>
            ))}
          </Select>
        </Field>
      ) : null}
      <Field id={`${id}-description`} label="What needs doing" error={fieldError("description")}>
        <TextArea
          id={`${id}-description`}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          maxLength={10_000}
          required
          invalid={fieldError("description") !== undefined}
          data-testid="offer-file-description"
        />
      </Field>
      <Field
        id={`${id}-to`}
        label="Offer to"
        optional
        hint="A participant id such as agent://worker or human:bob. Empty: anyone may take it."
        error={fieldError("to")}
      >
        <TextInput
          id={`${id}-to`}
          value={to}
          onChange={(e) => setTo(e.target.value)}
          autoComplete="off"
          spellCheck={false}
          hasHint
          invalid={fieldError("to") !== undefined}
          data-testid="offer-file-to"
        />
      </Field>
      <Field id={`${id}-context`} label="Context" optional hint="One key=value per line, e.g. ticket=OPS-12." error={fieldError("context")}>
        <TextArea
          id={`${id}-context`}
          value={contextText}
          onChange={(e) => setContextText(e.target.value)}
          className="font-mono"
          spellCheck={false}
          hasHint
          invalid={fieldError("context") !== undefined}
          data-testid="offer-file-context"
        />
      </Field>
      <div className="flex flex-wrap items-center gap-3">
        <Button type="submit" variant="primary" pending={state.pending} aria-disabled={state.pending} data-testid="offer-file-submit">
          Offer the handoff
        </Button>
        {made ? (
          <Link href={fileHref(made.dirKey, made.taskId)} className="text-sm font-semibold text-blue-800 hover:underline dark:text-sky-300">
            Open it
          </Link>
        ) : null}
      </div>
      <FileResultLine outcome={state.outcome} sentence={state.sentence} testId="offer-file-result" />
    </form>
  );
}
