// Who is who in the console: the users of the console (people) and the other
// participant ids seen in sessions (agents), from ActionService.ListDirectory,
// and the display helpers built on it. Pure.

import type { ListDirectoryResponse } from "@/lib/gen/baton/v1/actions_pb";
import { shortParticipantName } from "@/lib/authz/participants";
import { isRole, roleAtLeast, type Role } from "@/lib/authz/roles";
import { RUNTIME_SENDER } from "@/lib/macp/constants";

export interface Person {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  disabled: boolean;
}

export interface Directory {
  people: readonly Person[];
  /** Participant ids seen in sessions that belong to no user, newest first. */
  agents: readonly string[];
  byParticipant: ReadonlyMap<string, Person>;
  /** Agents' display names from the agents directory (BATON_AGENTS_FILE). */
  agentNames?: ReadonlyMap<string, string>;
}

export const EMPTY_DIRECTORY: Directory = Object.freeze({ people: [], agents: [], byParticipant: new Map<string, Person>() });

export function directoryFrom(res: ListDirectoryResponse): Directory {
  const people: Person[] = res.users
    .filter((u) => isRole(u.role))
    .map((u) => ({
      username: u.username,
      displayName: u.displayName || u.username,
      role: u.role as Role,
      participantId: u.participantId,
      disabled: u.disabled,
    }));
  const agents = [...res.agents].sort((a, b) => Number(b.lastSeenUnixMs - a.lastSeenUnixMs)).map((a) => a.participantId);
  const agentNames = new Map(res.agents.filter((a) => a.displayName !== "").map((a) => [a.participantId, a.displayName]));
  return { people, agents, byParticipant: new Map(people.map((p) => [p.participantId, p])), agentNames };
}

/** A console user as the list names them (read by the server with the list's first view). */
export interface ListPerson {
  participantId: string;
  displayName: string;
  role: string;
}

/** A directory of people alone (the list's names, read by the server with its first view). */
export function directoryFromPeople(people: readonly ListPerson[], agentNames: Readonly<Record<string, string>> = {}): Directory {
  const list: Person[] = people
    .filter((p) => isRole(p.role) && p.participantId !== "")
    .map((p) => ({
      username: "",
      displayName: p.displayName || p.participantId,
      role: p.role as Role,
      participantId: p.participantId,
      disabled: false,
    }));
  return {
    people: list,
    agents: Object.keys(agentNames),
    byParticipant: new Map(list.map((p) => [p.participantId, p])),
    agentNames: new Map(Object.entries(agentNames)),
  };
}

const MAX_SHORT_NAME = 40;

/**
 * Display name for a participant id: the user's name, else the id without its
 * prefix ("agent://oncall/alice" → "oncall/alice"), shortened in the middle
 * when long (the full id belongs in a tooltip).
 */
export function nameIn(dir: Directory, id: string): string {
  const person = dir.byParticipant.get(id)?.displayName;
  if (person !== undefined) return person;
  const agent = dir.agentNames?.get(id);
  if (agent !== undefined) return agent;
  const short = shortParticipantName(id);
  return short.length > MAX_SHORT_NAME ? `${short.slice(0, 18)}…${short.slice(-18)}` : short;
}

const resolvers = new WeakMap<Directory, (id: string) => string>();

/** nameIn bound to one directory, the same function for the same directory (so per-directory caches and memos hold). */
export function nameResolver(dir: Directory): (id: string) => string {
  let r = resolvers.get(dir);
  if (!r) {
    r = (id: string) => nameIn(dir, id);
    resolvers.set(dir, r);
  }
  return r;
}

export type ActorKind = "person" | "agent" | "runtime";

/**
 * Whether a sender is a person or an agent: known console users and `human:`
 * ids are people; the runtime's own id is the runtime; anything else is an agent.
 */
export function actorKindOf(dir: Directory, id: string): ActorKind {
  if (id === RUNTIME_SENDER) return "runtime";
  if (dir.byParticipant.has(id) || id.startsWith("human:")) return "person";
  return "agent";
}

export const ACTOR_KIND_LABEL: Readonly<Record<ActorKind, string>> = Object.freeze({
  person: "person",
  agent: "agent",
  runtime: "runtime",
});

/** People who can be picked as approvers: enabled approver or admin users. */
export function approverChoices(dir: Directory): Person[] {
  return dir.people.filter((p) => !p.disabled && roleAtLeast(p.role, "approver"));
}

/** Participants one may add to a session: enabled people (not oneself), then known agents. */
export function participantChoices(dir: Directory, me: string): { people: Person[]; agents: string[] } {
  return {
    people: dir.people.filter((p) => !p.disabled && p.participantId !== me && p.role !== "viewer"),
    agents: dir.agents.filter((a) => a !== me),
  };
}
