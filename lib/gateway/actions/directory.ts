// The people picker's directory: the console's users, and the other
// participant ids (agents) seen in sessions: from the console's catalog
// (participantsSeen), so it costs what the distinct ids are, not the
// history; without a catalog (tests), from the runtime's ListSessions.
import { create } from "@bufbuild/protobuf";
import {
  DirectoryAgentSchema,
  DirectoryUserSchema,
  ListDirectoryResponseSchema,
  type ListDirectoryResponse,
} from "@/lib/gen/baton/v1/actions_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { RUNTIME_SENDER } from "@/lib/macp/constants";
import { upstreamError } from "../errors";
import type { ActionCore } from "./core";

/** At most this many agents are listed (the most recently seen). */
export const DIRECTORY_MAX_AGENTS = 1_000;

export async function listDirectory(core: ActionCore, signal?: AbortSignal): Promise<ListDirectoryResponse> {
  const users = await core.options.users.users();
  const human = new Set(users.map((u) => u.participantId));
  const agents = new Map<string, { count: number; last: number }>();
  const seen = core.options.participantsSeen;
  if (seen) {
    // From the console's catalog: one row per distinct id, whatever the history
    // (and still there while the runtime is unreachable).
    for (const a of seen(DIRECTORY_MAX_AGENTS + human.size)) {
      if (a.participantId === RUNTIME_SENDER || human.has(a.participantId) || agents.size >= DIRECTORY_MAX_AGENTS) continue;
      agents.set(a.participantId, { count: a.sessions, last: a.lastSeenMs });
    }
  } else {
    let sessions: SessionMetadata[];
    try {
      sessions = await core.options.actions.listSessions(signal);
    } catch (e) {
      throw upstreamError(e, "listing sessions");
    }
    for (const s of sessions) {
      const ids = new Set([...s.participants, s.initiator]);
      for (const id of ids) {
        if (id === "" || id === RUNTIME_SENDER || human.has(id)) continue;
        const a = agents.get(id) ?? { count: 0, last: 0 };
        a.count += 1;
        a.last = Math.max(a.last, Number(s.startedAtUnixMs));
        agents.set(id, a);
      }
    }
  }
  // Agents named in the agents directory are known even before a session names them.
  const names = core.options.agentNames;
  if (names) {
    for (const id of names.keys()) {
      if (agents.size >= DIRECTORY_MAX_AGENTS) break;
      if (!human.has(id) && !agents.has(id)) agents.set(id, { count: 0, last: 0 });
    }
  }
  return create(ListDirectoryResponseSchema, {
    users: [...users]
      .sort((a, b) => a.displayName.localeCompare(b.displayName))
      .map((u) =>
        create(DirectoryUserSchema, {
          username: u.username,
          displayName: u.displayName,
          role: u.role,
          participantId: u.participantId,
          disabled: u.disabled === true,
        }),
      ),
    agents: [...agents.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([participantId, a]) =>
        create(DirectoryAgentSchema, {
          participantId,
          sessionCount: a.count,
          lastSeenUnixMs: BigInt(a.last),
          displayName: names?.get(participantId) ?? "",
        }),
      ),
  });
}
