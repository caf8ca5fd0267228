"use client";
// Who sent an event, and what they are: a person (a console user or a
// `human:` id) or an agent (or the runtime itself) — an icon and a word, never
// colour alone. People show their display name; the id is in the tooltip.

import { createContext, useContext } from "react";
import { ACTOR_KIND_LABEL, actorKindOf, EMPTY_DIRECTORY, type Directory } from "@/lib/client/directory";
import { Icon } from "@/components/Icon";

export const ActorDirectoryContext = createContext<Directory>(EMPTY_DIRECTORY);

const ICON = { person: "user", agent: "bot", runtime: "server" } as const;

export function ActorLabel({ id }: { id: string }) {
  const dir = useContext(ActorDirectoryContext);
  const kind = actorKindOf(dir, id);
  const person = dir.byParticipant.get(id);
  return (
    <span className="inline-flex min-w-0 items-center gap-1" title={id || "the runtime"} data-actor-kind={kind}>
      <Icon name={ICON[kind]} className="h-3.5 w-3.5 shrink-0" />
      <span className="sr-only">Sender: </span>
      <span className="truncate">{person ? person.displayName : id || "(runtime)"}</span>
      <span className="shrink-0 rounded bg-slate-100 px-1 text-[11px] leading-4 text-slate-700 dark:bg-slate-800 dark:text-slate-300">{ACTOR_KIND_LABEL[kind]}</span>
    </span>
  );
}
