"use client";
// The hand-off dialog's saved templates: the picker at the top (choosing one
// prefills the form; "None" empties it) with "Delete template", and the row
// that names and saves the form as a template. The state is the dialog's
// (use-hand-off-dialog.ts).

import { LIMITS } from "@/lib/actions/rules";
import type { HandOffDialogState, TemplatesApi } from "@/features/hand-off/use-hand-off-dialog";
import { Button, Field, Select, TextInput } from "@/components/ui/forms";

type TemplateState = HandOffDialogState["template"];

export function TemplatePicker({ templates, template, locked }: { templates: TemplatesApi; template: TemplateState; locked: boolean }) {
  return (
    <div className="flex flex-wrap items-end gap-2">
      <Field
        id="ho-template"
        label="Template"
        className="min-w-0 flex-1"
        hint={templates.error ? "Your templates could not be loaded." : undefined}
      >
        <Select
          id="ho-template"
          value={template.id}
          disabled={locked || !templates.loaded}
          hasHint={templates.error}
          onChange={(e) => template.choose(e.currentTarget.value)}
          data-testid="hand-off-template"
        >
          <option value="">{templates.templates.length === 0 ? "No saved templates yet" : "None: an empty form"}</option>
          {templates.templates.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </Select>
      </Field>
      {template.id !== "" && !locked ? (
        <Button variant="quiet" onClick={() => void template.remove()} data-testid="hand-off-template-delete">
          Delete template
        </Button>
      ) : null}
    </div>
  );
}

export function SaveTemplateRow({ template, error }: { template: TemplateState; error: string | undefined }) {
  return (
    <div className="flex flex-wrap items-end gap-2 rounded-md border border-slate-300 p-3 dark:border-slate-700">
      <Field id="ho-template-name" label="Template name" error={error} className="min-w-0 flex-1">
        <TextInput
          id="ho-template-name"
          data-field="templateName"
          value={template.name}
          autoFocus
          onChange={(e) => template.rename(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              void template.save();
            }
          }}
          invalid={Boolean(error)}
          maxLength={LIMITS.templateName + 20}
          data-testid="hand-off-template-name"
        />
      </Field>
      <Button
        onClick={() => void template.save()}
        pending={template.saving}
        disabled={template.saving}
        data-testid="hand-off-template-save"
      >
        Save
      </Button>
      <Button variant="quiet" onClick={() => template.setSavingOpen(false)}>
        Cancel
      </Button>
    </div>
  );
}
