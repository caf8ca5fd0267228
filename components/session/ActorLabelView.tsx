// Who sent an event, and what they are: a person (a console user or a
// `human:` id) or an agent (or the runtime itself) — an icon and a word, never
// colour alone. People show their display name; the id is in the tooltip.
// Plain markup for server and browser; ActorLabel.tsx looks the sender up in
// the live directory.

import { ACTOR_KIND_LABEL, actorKindOf, EMPTY_DIRECTORY, nameIn, type Directory } from "@/lib/client/directory";
import { Icon } from "@/components/Icon";

const ICON = { person: "user", agent: "bot", runtime: "server" } as const;

export function ActorLabelView({ id, directory = EMPTY_DIRECTORY }: { id: string; directory?: Directory }) {
  const kind = actorKindOf(directory, id);
  return (
    <span className="inline-flex min-w-0 items-center gap-1" title={id || "the runtime"} data-actor-kind={kind}>
      <Icon name={ICON[kind]} className="h-3.5 w-3.5 shrink-0" />
      <span className="sr-only">Sender: </span>
      <span className="truncate">{id ? nameIn(directory, id) : "the runtime"}</span>
      <span className="shrink-0 rounded bg-slate-100 px-1 text-[11px] leading-4 text-slate-700 dark:bg-slate-800 dark:text-slate-300">{ACTOR_KIND_LABEL[kind]}</span>
    </span>
  );
}
