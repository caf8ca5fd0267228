// Baton's ActionService (proto/baton/v1/actions.proto) as a plain
// `(router) => void`. Each call: sign-in (cookie) → CSRF (state-changing
// calls) → role, checked by the access interceptor on the console's router
// before the handler runs (request-auth.ts, rules in access-rules.ts) →
// input validation (action-input.ts) → ActionGateway, which reads the
// session, runs decide() and sends as the caller's identity. Streams (inbox,
// demo) end with the sign-in that opened them (sign-in-streams.ts, installed
// on the console's whole router).
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ActionService,
  DeleteHandoffTemplateResponseSchema,
  EscalationSchema,
  EscalationState,
  EscalationStepKind,
  GetEscalationResponseSchema,
  type EscalationStep,
  HandoffTemplateSchema,
  ListHandoffTemplatesResponseSchema,
  SaveHandoffTemplateResponseSchema,
  ControlDemoResponseSchema,
  GetCapabilitiesResponseSchema,
  GetPolicyResponseSchema,
  ListWebhookDeliveriesResponseSchema,
  type DemoScenario,
  type RunDemoResponse,
  type DemoControlState,
  type DemoControlAction,
} from "@/lib/gen/baton/v1/actions_pb";
import { roleAtLeast } from "@/lib/authz/roles";
import {
  parseAttachContext,
  parseCancel,
  parseCommit,
  parseOffer,
  parseRespond,
  parseStart,
  parseTaskCommit,
  parseTaskComplete,
  parseTaskFail,
  parseTaskRequest,
  parseTaskRespond,
  parseTaskUpdate,
} from "./action-input";
import type { ActionGateway } from "./actions";
import type { Gateway } from "./gateway";
import { RecentClosed } from "./inbox-news";
import type { SignedInUser } from "./identity";
import { watchInbox } from "./inbox-stream";
import { signedInOf, signedInUser, type RequestAuthOptions } from "./request-auth";
import { decide, shortParticipantName } from "@/lib/authz/decide";
import type { EscalationStepInput } from "@/lib/actions/rules";
import type { Escalations, EscalationRecord, EscalationStateName } from "./escalations";
import { invalidField, messageIdOf, sessionIdOf } from "./action-input";
import { parseTemplate, parseTemplateId, type HandoffTemplateStore, type TemplateRecord } from "./handoff-templates";
import type { HookStatus } from "@/lib/notify/notifier";

/** Outbound webhooks' state for admins (lib/notify/notifier.ts). */
export interface WebhookStatusSource {
  status(recent: number): HookStatus[];
}

/** Admins' "Run demo" (implemented by the console server, lib/server/demo.ts). */
export interface DemoRunner {
  /** Null when demos can be played here, else why not. */
  unavailableReason(): string | null;
  scenarios(): DemoScenario[];
  run(input: {
    scenario: string;
    speed: number;
    instant: boolean;
    startPaused?: boolean;
    requestedBy: string;
    signal?: AbortSignal;
  }): AsyncIterable<RunDemoResponse>;
  control(input: { runId: string; action: DemoControlAction; speed: number; instant: boolean }): DemoControlState;
}

export interface ActionRoutesOptions extends RequestAuthOptions {
  gateway: Gateway;
  actions: ActionGateway;
  heartbeatMs?: number;
  /** Without it, RunDemo answers UNIMPLEMENTED and admins see no scenarios. */
  demo?: DemoRunner;
  /** The console's notifier, when webhooks are configured (read at call time). */
  webhooks?: () => WebhookStatusSource | null;
  /** Saved "Hand off…" templates; without it the template calls answer UNIMPLEMENTED. */
  templates?: HandoffTemplateStore;
  /** Escalation chains; without it the escalation calls answer UNIMPLEMENTED. */
  escalations?: Escalations;
}

const STEP_KIND: Readonly<Record<EscalationStepInput["kind"], EscalationStepKind>> = {
  notify: EscalationStepKind.NOTIFY,
  reoffer: EscalationStepKind.REOFFER,
};
const STATE: Readonly<Record<EscalationStateName, EscalationState>> = {
  pending: EscalationState.PENDING,
  done: EscalationState.DONE,
  stopped: EscalationState.STOPPED,
  cancelled: EscalationState.CANCELLED,
  failed: EscalationState.FAILED,
};

/** A request's steps in the action contract's shape (checked there, lib/actions/rules.ts). */
function stepsOf(steps: readonly EscalationStep[]): EscalationStepInput[] {
  return steps.map((s, i) => {
    if (s.kind !== EscalationStepKind.NOTIFY && s.kind !== EscalationStepKind.REOFFER) {
      throw invalidField(`steps[${i}].kind`, "choose ESCALATION_STEP_KIND_NOTIFY or ESCALATION_STEP_KIND_REOFFER");
    }
    return {
      kind: s.kind === EscalationStepKind.NOTIFY ? "notify" : "reoffer",
      afterMinutes: s.afterMinutes,
      participants: s.participants,
    };
  });
}

function escalationMessage(r: EscalationRecord) {
  return create(EscalationSchema, {
    originSessionId: r.origin,
    sessionId: r.sessionId,
    owner: r.owner,
    state: STATE[r.state],
    steps: r.steps.map((s) => ({ kind: STEP_KIND[s.kind], afterMinutes: s.afterMinutes, participants: [...s.participants] })),
    nextStep: r.nextStep,
    nextAtUnixMs: BigInt(r.state === "pending" ? r.nextAtMs : 0),
    done: r.done.map((a) => ({
      step: a.step,
      kind: STEP_KIND[a.kind],
      sessionId: a.sessionId,
      messageIds: a.messageIds,
      cancelledSessionId: a.cancelledSessionId,
      participants: a.participants,
      atUnixMs: BigInt(a.atMs),
    })),
    detail: r.detail,
    updatedUnixMs: BigInt(r.updatedMs),
    sessionIds: r.sessionIds,
  });
}

function templateMessage(t: TemplateRecord) {
  return create(HandoffTemplateSchema, {
    id: t.id,
    name: t.name,
    target: t.target,
    scope: t.scope,
    reason: t.reason,
    runbookMarkdown: t.runbookMarkdown,
    policy: t.policy,
    approvers: t.approvers,
    implicitAcceptTimeoutMs: t.implicitAcceptTimeoutMs,
    ttlMs: t.ttlMs,
    participants: t.participants,
    updatedUnixMs: BigInt(t.updatedMs),
  });
}

const POLICY_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$/;

export function actionRoutes(options: ActionRoutesOptions): (router: ConnectRouter) => void {
  const { gateway, actions } = options;
  /** The action runs with the caller the access interceptor signed in (CSRF checked). */
  const act = async <T>(ctx: HandlerContext, run: (user: SignedInUser) => Promise<T>): Promise<T> => run(signedInUser(signedInOf(ctx)));

  /** Allowed by decide() to keep templates; the store and the owner key. */
  const templatesFor = (ctx: HandlerContext): { store: HandoffTemplateStore; owner: string } => {
    const auth = signedInOf(ctx);
    const d = decide({ role: auth.user.role, participantId: auth.user.participantId }, undefined, "manageHandoffTemplates");
    if (!d.allowed) throw new ConnectError(d.reason, Code.PermissionDenied, { "x-baton-deny": d.code });
    if (!options.templates) throw new ConnectError("This console keeps no hand-off templates.", Code.Unimplemented);
    return { store: options.templates, owner: auth.user.username };
  };

  /** The catalog's recently closed sessions, read once for every inbox stream (their news). */
  const recentClosed = new RecentClosed(gateway.catalog);

  const escalationsOf = (): Escalations => {
    if (!options.escalations) throw new ConnectError("This console runs no escalations.", Code.Unimplemented);
    return options.escalations;
  };

  return (router) => {
    router.service(ActionService, {
      startEscalation: (req, ctx) =>
        act(ctx, async (user) => {
          const escalations = escalationsOf();
          if (req.messageId !== "") messageIdOf(req.messageId);
          return escalationMessage(await escalations.create(user, sessionIdOf(req.sessionId), stepsOf(req.steps), ctx.signal));
        }),
      async getEscalation(req, ctx) {
        signedInOf(ctx);
        const rec = escalationsOf().get(sessionIdOf(req.sessionId));
        return create(GetEscalationResponseSchema, rec ? { found: true, escalation: escalationMessage(rec) } : { found: false });
      },
      cancelEscalation: (req, ctx) =>
        act(ctx, async (user) => {
          const escalations = escalationsOf();
          const sessionId = sessionIdOf(req.sessionId);
          const rec = escalations.get(sessionId);
          // The role is checked before anything is looked up: a viewer is refused whether or not a chain exists.
          const d = decide({ role: user.role, participantId: user.participantId }, undefined, "cancelEscalation", {
            escalation: { owner: rec ? rec.owner : user.participantId },
          });
          if (!d.allowed) throw new ConnectError(d.reason, Code.PermissionDenied, { "x-baton-deny": d.code });
          if (!rec) throw new ConnectError(`session ${sessionId} has no escalation`, Code.NotFound);
          const out = escalations.cancel(sessionId, `${user.displayName} (${user.participantId})`) ?? rec;
          return escalationMessage(out);
        }),

      async listHandoffTemplates(_req, ctx) {
        const { store, owner } = templatesFor(ctx);
        return create(ListHandoffTemplatesResponseSchema, {
          templates: store.list(owner).map(templateMessage),
          maxTemplates: store.maxPerPerson,
        });
      },
      async saveHandoffTemplate(req, ctx) {
        const { store, owner } = templatesFor(ctx);
        return create(SaveHandoffTemplateResponseSchema, { template: templateMessage(store.save(owner, parseTemplate(req.template))) });
      },
      async deleteHandoffTemplate(req, ctx) {
        const { store, owner } = templatesFor(ctx);
        return create(DeleteHandoffTemplateResponseSchema, { deleted: store.delete(owner, parseTemplateId(req.id)) });
      },

      startSession: (req, ctx) =>
        act(ctx, async (user) =>
          actions.startSession(user, parseStart(req, user.participantId, await options.accounts.directory.users()), ctx.signal),
        ),
      offer: (req, ctx) => act(ctx, (user) => actions.offer(user, parseOffer(req), ctx.signal)),
      attachContext: (req, ctx) => act(ctx, (user) => actions.attachContext(user, parseAttachContext(req), ctx.signal)),
      accept: (req, ctx) => act(ctx, (user) => actions.accept(user, parseRespond(req), ctx.signal)),
      decline: (req, ctx) => act(ctx, (user) => actions.decline(user, parseRespond(req), ctx.signal)),
      commit: (req, ctx) => act(ctx, (user) => actions.commit(user, parseCommit(req), ctx.signal)),
      cancel: (req, ctx) => act(ctx, (user) => actions.cancel(user, parseCancel(req), ctx.signal)),
      taskRequest: (req, ctx) => act(ctx, (user) => actions.taskRequest(user, parseTaskRequest(req, actions.maxPayloadBytes), ctx.signal)),
      taskAccept: (req, ctx) => act(ctx, (user) => actions.taskAccept(user, parseTaskRespond(req), ctx.signal)),
      taskReject: (req, ctx) => act(ctx, (user) => actions.taskReject(user, parseTaskRespond(req), ctx.signal)),
      taskUpdate: (req, ctx) => act(ctx, (user) => actions.taskUpdate(user, parseTaskUpdate(req), ctx.signal)),
      taskComplete: (req, ctx) => act(ctx, (user) => actions.taskComplete(user, parseTaskComplete(req), ctx.signal)),
      taskFail: (req, ctx) => act(ctx, (user) => actions.taskFail(user, parseTaskFail(req), ctx.signal)),
      taskCommit: (req, ctx) => act(ctx, (user) => actions.taskCommit(user, parseTaskCommit(req), ctx.signal)),

      async listDirectory(_req, ctx) {
        signedInOf(ctx);
        return actions.directory(ctx.signal);
      },

      async getPolicy(req, ctx) {
        signedInOf(ctx);
        const id = req.policyId.trim();
        if (!POLICY_ID.test(id))
          throw new ConnectError("policy_id: must be a policy id like policy.default (letters, digits, . _ : / -)", Code.InvalidArgument);
        const d = await actions.policy(id, ctx.signal);
        if (!d) return create(GetPolicyResponseSchema, { found: false, policyId: id });
        return create(GetPolicyResponseSchema, {
          found: true,
          policyId: d.policyId,
          mode: d.mode,
          description: d.description,
          rulesJson: d.rules,
        });
      },

      async getCapabilities(_req, ctx) {
        const auth = signedInOf(ctx);
        const admin = roleAtLeast(auth.user.role, "admin");
        const demo = options.demo;
        const reason = demo ? demo.unavailableReason() : "This console was started without the demo player.";
        return create(GetCapabilitiesResponseSchema, {
          maxPayloadBytes: actions.maxPayloadBytes,
          ...(admin ? { demoScenarios: demo?.scenarios() ?? [], demoAvailable: reason === null, demoUnavailableReason: reason ?? "" } : {}),
        });
      },

      async *runDemo(req, ctx) {
        const auth = signedInOf(ctx);
        const demo = options.demo;
        if (!demo) throw new ConnectError("This console was started without the demo player.", Code.Unimplemented);
        const run = demo.run({
          scenario: req.scenario,
          speed: req.speed,
          instant: req.instant,
          startPaused: req.startPaused,
          requestedBy: auth.user.username,
          signal: ctx.signal,
        });
        yield* gateway.trackBrowserStream(run, ctx.signal);
      },

      async controlDemo(req, ctx) {
        signedInOf(ctx);
        const demo = options.demo;
        if (!demo) throw new ConnectError("This console was started without the demo player.", Code.Unimplemented);
        return create(ControlDemoResponseSchema, {
          state: demo.control({ runId: req.runId, action: req.action, speed: req.speed, instant: req.instant }),
        });
      },

      async listWebhookDeliveries(req, ctx) {
        signedInOf(ctx);
        const limit = req.limit === 0 ? 20 : req.limit;
        if (limit > 100) throw new ConnectError("limit: at most 100 deliveries per hook", Code.InvalidArgument);
        const source = options.webhooks?.() ?? null;
        if (!source) return create(ListWebhookDeliveriesResponseSchema, { configured: false });
        return create(ListWebhookDeliveriesResponseSchema, {
          configured: true,
          hooks: source.status(limit).map((h) => ({
            id: h.id,
            format: h.format,
            destination: h.destination,
            pending: BigInt(h.pending),
            failed: BigInt(h.failed),
            recent: h.recent.map((r) => ({
              deliveryId: r.deliveryId,
              event: r.event,
              sessionId: r.sessionId,
              status: r.status,
              attempts: r.attempts,
              lastStatusCode: r.lastStatus,
              lastError: r.lastError,
              createdUnixMs: BigInt(r.createdMs),
              lastAttemptUnixMs: BigInt(r.lastAttemptMs),
              nextAttemptUnixMs: BigInt(r.status === "pending" ? r.nextAtMs : 0),
            })),
          })),
        });
      },

      async *watchInbox(_req, ctx) {
        const auth = signedInOf(ctx);
        const users = await options.accounts.directory.users();
        const names = new Map(users.map((u) => [u.participantId, u.displayName]));
        const nameOf = (id: string) => names.get(id) ?? shortParticipantName(id);
        const stream = watchInbox(
          {
            feeder: gateway.feeder,
            policies: actions.policies,
            logger: gateway.logger,
            ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
            ...(options.escalations ? { escalations: options.escalations } : {}),
            recentClosed,
          },
          { role: auth.user.role, participantId: auth.user.participantId },
          nameOf,
          ctx.signal,
        );
        yield* gateway.trackBrowserStream(stream, ctx.signal, auth.user.username);
      },
    });
  };
}
