import { describe, expect, it } from "vitest";
import { ACTIONS, decideAll, type Action } from "@/lib/authz/decide";
import { ACTORS, ACTOR_NAMES, HANDOFF, NOW, TASK, type ActorName, type Scenario } from "./__fixtures__/decide-kit";

// Actions every role at or above the minimum may always do, whatever the session.
const ALWAYS: Record<ActorName, Action[]> = {
  vic: ["view"],
  alice: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  aliceApprover: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  bob: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  carol: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  carolOperator: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  dave: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  root: ["view", "startSession", "runDemo", "manageUsers", "managePolicies", "manageHandoffTemplates", "cancelEscalation"],
};

type Expectation = Partial<Record<ActorName, Action[]>>;

/** Allowed session actions per scenario and actor; anything not listed must be refused. */
const HANDOFF_EXPECT: Record<string, Expectation> = {
  noOffer: { alice: ["offer", "cancel"], aliceApprover: ["offer", "cancel"], root: ["cancel"] },
  pending: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    root: ["cancel"],
  },
  contextSent: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    root: ["cancel"],
  },
  accepted: { alice: ["attachContext", "commit", "cancel"], aliceApprover: ["attachContext", "commit", "cancel"], root: ["cancel"] },
  declined: {
    alice: ["offer", "attachContext", "commit", "cancel"],
    aliceApprover: ["offer", "attachContext", "commit", "cancel"],
    root: ["cancel"],
  },
  committed: {},
  cancelled: {},
  expired: {},
  suspended: { alice: ["cancel"], aliceApprover: ["cancel"], root: ["cancel"] },
  designatedAccepted: {
    alice: ["attachContext", "cancel"],
    aliceApprover: ["attachContext", "cancel"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
  designatedPending: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    carol: ["cancel"],
    root: ["cancel"],
  },
  anyParticipantAccepted: {
    alice: ["attachContext", "commit", "cancel"],
    aliceApprover: ["attachContext", "commit", "cancel"],
    bob: ["commit"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
  unknownPolicyAccepted: { alice: ["attachContext", "cancel"], aliceApprover: ["attachContext", "cancel"], root: ["cancel"] },
  implicitNotYet: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    carol: ["cancel"],
    root: ["cancel"],
  },
  implicitPassed: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
};

const TASK_EXPECT: Record<string, Expectation> = {
  noTask: { alice: ["taskRequest", "cancel"], aliceApprover: ["taskRequest", "cancel"], root: ["cancel"] },
  requestedBob: { alice: ["cancel"], aliceApprover: ["cancel"], bob: ["taskAccept", "taskReject"], root: ["cancel"] },
  requestedAnyone: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    bob: ["taskAccept", "taskReject"],
    carol: ["taskAccept", "taskReject"],
    carolOperator: ["taskAccept", "taskReject"],
    root: ["cancel"],
  },
  inProgress: { alice: ["cancel"], aliceApprover: ["cancel"], bob: ["taskUpdate", "taskComplete", "taskFail"], root: ["cancel"] },
  rejectedAnyone: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    carol: ["taskReject"],
    carolOperator: ["taskReject"],
    root: ["cancel"],
  },
  rejectedAnyoneReassign: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    bob: ["taskAccept"],
    carol: ["taskAccept", "taskReject"],
    carolOperator: ["taskAccept", "taskReject"],
    root: ["cancel"],
  },
  inProgressReassign: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    bob: ["taskReject", "taskUpdate", "taskComplete", "taskFail"],
    root: ["cancel"],
  },
  completed: { alice: ["commit", "cancel"], aliceApprover: ["commit", "cancel"], root: ["cancel"] },
  failed: { alice: ["commit", "cancel"], aliceApprover: ["commit", "cancel"], root: ["cancel"] },
  failedRequireOutput: { alice: ["cancel"], aliceApprover: ["cancel"], root: ["cancel"] },
  emptyOutputRequireOutput: { alice: ["cancel"], aliceApprover: ["cancel"], root: ["cancel"] },
  completedRequireOutput: { alice: ["commit", "cancel"], aliceApprover: ["commit", "cancel"], root: ["cancel"] },
  committed: {},
  designatedCompleted: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
};

function expectTable(scenarios: Record<string, Scenario>, expectations: Record<string, Expectation>) {
  for (const [name, scenario] of Object.entries(scenarios)) {
    const expected = expectations[name];
    if (!expected) throw new Error(`no expectation for scenario ${name}`);
    for (const actorName of ACTOR_NAMES) {
      it(`${name} × ${actorName}`, () => {
        const allowed = new Set<Action>([...ALWAYS[actorName], ...(expected[actorName] ?? [])]);
        const ctx = { now: NOW, ...scenario.ctx };
        const got = decideAll(ACTORS[actorName], scenario.view, ctx);
        const actual = ACTIONS.filter((a) => got[a].allowed);
        expect(actual.sort()).toEqual([...allowed].sort());
        for (const a of ACTIONS) {
          const d = got[a];
          if (!d.allowed) {
            expect(d.reason, `${a} reason`).toMatch(/^[A-Z"].*\.$/);
            expect(d.reason).not.toMatch(/undefined|\[object/);
          }
        }
      });
    }
  }
}

describe("decide: handoff table (role × protocol state × action)", () => {
  expectTable(HANDOFF, HANDOFF_EXPECT);
});

describe("decide: task table (role × protocol state × action)", () => {
  expectTable(TASK, TASK_EXPECT);
});
