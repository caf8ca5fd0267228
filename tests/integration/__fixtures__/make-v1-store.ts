// Provenance of v1-store/: a runtime store written by the schema-v1 runtime
// (commit 8f792d1, before the session index of schema v2), plus what that
// runtime answered about it (v1-store/expected.json). It was produced once by
//
//   git checkout 8f792d1 -- lib/runtime && npx tsx tests/integration/__fixtures__/make-v1-store.ts
//
// and is read by tests/integration/store-migration.test.ts, which opens it
// with the current runtime (migrating it to the current schema) and checks
// that every answer is the same. Running this script against a newer runtime
// writes a store of that runtime's schema instead, so do not re-run it.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { toJson } from "@bufbuild/protobuf";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { agent, clientFor, collectEnvelopes, startTestRuntime, tempDir } from "../harness";

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "v1-store");
const dataDir = tempDir("baton-v1-fixture-");
const rt = await startTestRuntime({ MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir });
const enc = new TextEncoder();
const admin = clientFor(rt, "agent://admin");
const reg = await admin.registerPolicy({
  policyDescriptor: {
    policyId: "policy.fixture.lead",
    mode: HANDOFF_MODE,
    rules: JSON.stringify({ commitment: { authority: "designated_role", designated_roles: ["agent://lead"] } }),
    schemaVersion: 1,
  },
});
if (!reg.ok) throw new Error(reg.error);

const ids = {
  resolved: "fixture-handoff-resolved-000001",
  policy: "fixture-handoff-policy-0000001",
  open: "fixture-handoff-open-000000001",
  suspended: "fixture-handoff-suspended-0001",
  resumed: "fixture-handoff-resumed-000001",
  cancelled: "fixture-task-cancelled-0000001",
  expired: "fixture-handoff-expired-000001",
  taskOpen: "fixture-task-open-000000000001",
  taskDone: "fixture-task-resolved-00000001",
};
const must = async (p: Promise<{ ok: boolean; error?: { code: string; message: string } }>) => {
  const a = await p;
  if (!a.ok) throw new Error(`${a.error?.code} ${a.error?.message}`);
};
const o = (sid: string, mode = HANDOFF_MODE) => agent(rt, "agent://owner", sid, mode);
const t = (sid: string, mode = HANDOFF_MODE) => agent(rt, "agent://target", sid, mode);
const ONE_DAY = 86_400_000;

// RESOLVED handoff with a context.
await must(o(ids.resolved).start(["agent://owner", "agent://target"], { messageId: "r-start", ttlMs: ONE_DAY }));
await must(
  o(ids.resolved).send("HandoffOffer", { handoffId: "h1", targetParticipant: "agent://target", scope: "pager" }, { messageId: "r-offer" }),
);
await must(
  o(ids.resolved).send(
    "HandoffContext",
    { handoffId: "h1", contentType: "text/markdown", context: enc.encode("# Runbook\n- step") },
    { messageId: "r-ctx" },
  ),
);
await must(t(ids.resolved).send("HandoffAccept", { handoffId: "h1", reason: "ok" }, { messageId: "r-accept" }));
await must(o(ids.resolved).commit("handoff.accepted", true, { messageId: "r-commit" }));
// RESOLVED under a registered policy (bound copy on the SessionStart record).
await must(
  o(ids.policy).start(["agent://owner", "agent://target", "agent://lead"], {
    policy: "policy.fixture.lead",
    messageId: "p-start",
    ttlMs: ONE_DAY,
  }),
);
await must(o(ids.policy).send("HandoffOffer", { handoffId: "h1", targetParticipant: "agent://target" }, { messageId: "p-offer" }));
await must(t(ids.policy).send("HandoffDecline", { handoffId: "h1", reason: "busy" }, { messageId: "p-decline" }));
await must(
  agent(rt, "agent://lead", ids.policy).commit("handoff.declined", false, { policy: "policy.fixture.lead", messageId: "p-commit" }),
);
// OPEN handoff with a pending offer.
await must(o(ids.open).start(["agent://owner", "agent://target"], { messageId: "o-start", ttlMs: ONE_DAY }));
await must(o(ids.open).send("HandoffOffer", { handoffId: "h1", targetParticipant: "agent://target" }, { messageId: "o-offer" }));
// SUSPENDED.
await must(o(ids.suspended).start(["agent://owner", "agent://target"], { messageId: "s-start", ttlMs: ONE_DAY }));
await must(
  clientFor(rt, "agent://owner")
    .suspendSession({ sessionId: ids.suspended, reason: "pause" })
    .then((r) => r.ack!),
);
// Suspended then resumed (banked time), OPEN.
await must(o(ids.resumed).start(["agent://owner", "agent://target"], { messageId: "u-start", ttlMs: ONE_DAY }));
await must(
  clientFor(rt, "agent://owner")
    .suspendSession({ sessionId: ids.resumed, reason: "pause" })
    .then((r) => r.ack!),
);
await new Promise((r) => setTimeout(r, 50));
await must(
  clientFor(rt, "agent://owner")
    .resumeSession({ sessionId: ids.resumed, reason: "go" })
    .then((r) => r.ack!),
);
await must(o(ids.resumed).send("HandoffOffer", { handoffId: "h9", targetParticipant: "agent://target" }, { messageId: "u-offer" }));
// CANCELLED task.
await must(o(ids.cancelled, TASK_MODE).start(["agent://owner", "agent://target"], { messageId: "c-start", ttlMs: ONE_DAY }));
await must(
  o(ids.cancelled, TASK_MODE).send(
    "TaskRequest",
    { taskId: "t1", title: "rotate keys", requestedAssignee: "agent://target" },
    { messageId: "c-req" },
  ),
);
await must(
  clientFor(rt, "agent://owner")
    .cancelSession({ sessionId: ids.cancelled, reason: "not needed" })
    .then((r) => r.ack!),
);
// EXPIRED.
await must(o(ids.expired).start(["agent://owner", "agent://target"], { messageId: "e-start", ttlMs: 100 }));
await new Promise((r) => setTimeout(r, 700));
// OPEN task with progress; RESOLVED task.
await must(o(ids.taskOpen, TASK_MODE).start(["agent://owner", "agent://target"], { messageId: "to-start", ttlMs: ONE_DAY }));
await must(
  o(ids.taskOpen, TASK_MODE).send(
    "TaskRequest",
    { taskId: "t1", title: "drain node", requestedAssignee: "agent://target" },
    { messageId: "to-req" },
  ),
);
await must(t(ids.taskOpen, TASK_MODE).send("TaskAccept", { taskId: "t1", assignee: "agent://target" }, { messageId: "to-acc" }));
await must(
  t(ids.taskOpen, TASK_MODE).send(
    "TaskUpdate",
    { taskId: "t1", status: "running", progress: 0.5, message: "half" },
    { messageId: "to-upd" },
  ),
);
await must(o(ids.taskDone, TASK_MODE).start(["agent://owner", "agent://target"], { messageId: "td-start", ttlMs: ONE_DAY }));
await must(
  o(ids.taskDone, TASK_MODE).send(
    "TaskRequest",
    { taskId: "t1", title: "renew cert", requestedAssignee: "agent://target" },
    { messageId: "td-req" },
  ),
);
await must(t(ids.taskDone, TASK_MODE).send("TaskAccept", { taskId: "t1", assignee: "agent://target" }, { messageId: "td-acc" }));
await must(
  t(ids.taskDone, TASK_MODE).send("TaskComplete", { taskId: "t1", assignee: "agent://target", summary: "done" }, { messageId: "td-done" }),
);
await must(o(ids.taskDone, TASK_MODE).commit("task.completed", true, { messageId: "td-commit" }));

const reader = clientFor(rt, "agent://owner");
const sessions = (await reader.listSessions({})).sessions;
const histories: Record<string, string[]> = {};
for (const s of sessions) {
  const n = Number(s.participantActivity.reduce((a, p) => a + p.messageCount, 0)) + 1;
  histories[s.sessionId] = (await collectEnvelopes(reader, s.sessionId, n)).map((e) => e.messageId);
}
await rt.close();
fs.mkdirSync(out, { recursive: true });
fs.copyFileSync(path.join(dataDir, "baton-runtime.sqlite"), path.join(out, "baton-runtime.sqlite"));
fs.writeFileSync(
  path.join(out, "expected.json"),
  JSON.stringify({ ids, sessions: sessions.map((s) => toJson(SessionMetadataSchema, s)), histories }, null, 2) + "\n",
);
fs.rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(`wrote ${out} (${sessions.length} sessions)\n`);
