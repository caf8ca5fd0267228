// The people picker's directory: the console's users, and the other
// participant ids (agents) seen in the runtime's sessions.
import { create } from "@bufbuild/protobuf";
import { DirectoryAgentSchema, DirectoryUserSchema, ListDirectoryResponseSchema, type ListDirectoryResponse } from "@/lib/gen/baton/v1/actions_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { RUNTIME_SENDER } from "@/lib/macp/constants";
import { upstreamError } from "../errors";
import type { ActionCore } from "./core";

export async function listDirectory(core: ActionCore, signal?: AbortSignal): Promise<ListDirectoryResponse> {
  const users = await core.options.users.users();
  let sessions: SessionMetadata[];
  try {
    sessions = await core.options.actions.listSessions(signal);
  } catch (e) {
    throw upstreamError(e, "listing sessions");
  }
  const human = new Set(users.map((u) => u.participantId));
  const agents = new Map<string, { count: number; last: number }>();
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
      .map(([participantId, a]) => create(DirectoryAgentSchema, { participantId, sessionCount: a.count, lastSeenUnixMs: BigInt(a.last) })),
  });
}
