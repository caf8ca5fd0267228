// Who sent an event, and what they are: a person (a console user or a
// `human:` id) or an agent (or the runtime itself) — an icon and a word, never
// colour alone. People show their display name; the id is in the tooltip.
// Plain markup for server and browser; ActorLabel.tsx looks the sender up in
// the live directory.

import { ACTOR_KIND_LABEL, actorKindOf, EMPTY_DIRECTORY, nameIn, type Directory } from "@/lib/views/directory";
import { Icon } from "@/components/ui/Icon";

const ICON = { person: "user", agent: "bot", runtime: "server" } as const;

export function ActorLabelView({ id, directory = EMPTY_DIRECTORY }: { id: string; directory?: Directory }) {
  const kind = actorKindOf(directory, id);
  return (
    <span className="inline-flex min-w-0 items-center gap-1" title={id || "the runtime"} data-actor-kind={kind}>
      <Icon name={ICON[kind]} className="h-3.5 w-3.5 shrink-0" />
      <span className="sr-only">Sender: </span>
      <span className="truncate">{id ? nameIn(directory, id) : "the runtime"}</span>
      <span className="shrink-0 rounded bg-slate-100 px-1 text-[11px] leading-4 text-slate-700 dark:bg-slate-800 dark:text-slate-300">
        {ACTOR_KIND_LABEL[kind]}
      </span>
    </span>
  );
}

/**
 * A participant in a list cell: an icon saying person or agent (and the same
 * word for screen readers), the display name or the shortened id, and the
 * full id on hover. No "Sender" prefix: the cell's label says what it is.
 */
export function ActorName({ id, directory = EMPTY_DIRECTORY }: { id: string; directory?: Directory }) {
  if (id === "") return <span>—</span>;
  const kind = actorKindOf(directory, id);
  return (
    <span className="inline-flex min-w-0 items-center gap-1 align-bottom" title={id} data-actor-kind={kind} data-actor-id={id}>
      <Icon name={ICON[kind]} className="h-3.5 w-3.5 shrink-0 text-slate-500 dark:text-slate-400" />
      <span className="truncate">{nameIn(directory, id)}</span>
      <span className="sr-only"> ({ACTOR_KIND_LABEL[kind]})</span>
    </span>
  );
}
