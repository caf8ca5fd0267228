"use client";
// The sender of an event, named from the console's directory (people show
// their display name) provided by the session screen.

import { createContext, useContext } from "react";
import { EMPTY_DIRECTORY, type Directory } from "@/lib/views/directory";
import { ActorLabelView } from "@/features/session/ActorLabelView";

export const ActorDirectoryContext = createContext<Directory>(EMPTY_DIRECTORY);

export function ActorLabel({ id }: { id: string }) {
  return <ActorLabelView id={id} directory={useContext(ActorDirectoryContext)} />;
}
