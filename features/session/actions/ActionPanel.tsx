"use client";
// "Your actions" on the session page: every action of the session's mode for
// the signed-in person, enabled or disabled by decide() (lib/authz) with the
// reason shown next to it; one form open at a time; the implicit-accept
// countdown of a pending offer. Viewers see none of the controls.

import { RefusalScope } from "@/lib/client/refusals";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Action } from "@/lib/authz/decide";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import { loginHref } from "@/lib/views/sign-in";
import { DEFAULT_POLICY_SUMMARY } from "@/lib/authz/policy-summary";
import { briefFor } from "@/features/session/brief-model";
import { nameIn } from "@/lib/views/directory";
import { formatDuration } from "@/lib/views/format";
import {
  approvalFacts,
  decideContextFor,
  implicitAcceptAt,
  pendingOfferOf,
  policyIdOf,
  sessionPanel,
  waitingFor,
} from "@/features/session/session-authz";
import { useCapabilities, useDirectory, usePolicySummary } from "@/lib/client/use-console-data";
import { useNow } from "@/lib/client/use-now";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { Button } from "@/components/ui/forms";
import { BriefCard } from "@/features/session/Brief";
import { ApprovalForm, type ApprovalDecision } from "@/features/session/actions/ApprovalForm";
import { AttachForm } from "@/features/session/actions/AttachForm";
import { CancelForm } from "@/features/session/actions/CancelForm";
import type { SessionFormProps } from "@/features/session/actions/FormShell";
import { CommitForm, OfferForm, RespondForm } from "@/features/session/actions/HandoffForms";
import {
  TaskCommitForm,
  TaskCompleteForm,
  TaskFailForm,
  TaskRequestForm,
  TaskRespondForm,
  TaskUpdateForm,
} from "@/features/session/actions/TaskForms";

const LABEL: Partial<Record<Action, string>> = {
  offer: "Offer…",
  attachContext: "Attach runbook…",
  accept: "Accept…",
  decline: "Decline…",
  commit: "Commit…",
  cancel: "Cancel session…",
  taskRequest: "Request task…",
  taskAccept: "Take task…",
  taskReject: "Turn down…",
  taskUpdate: "Report progress…",
  taskComplete: "Complete…",
  taskFail: "Report failure…",
};

/** An approver's two ways to commit (lead approval): each opens the approval form with its outcome. */
type Choice = Action | ApprovalDecision;
const CHOICE_LABEL: Record<ApprovalDecision, string> = { approve: "Approve…", reject: "Reject…" };

const PRIMARY: ReadonlySet<Action> = new Set<Action>(["offer", "accept", "commit", "taskRequest", "taskAccept", "taskComplete"]);
const DEFAULT_MAX_PAYLOAD = 1_048_576;

function ImplicitAcceptNotice({ at, target, now, mine }: { at: number; target: string; now: number; mine: boolean }) {
  const left = at - now;
  return (
    <p
      className="flex items-start gap-2 rounded-md border border-blue-300 bg-blue-50 px-3 py-2 text-sm text-blue-950 dark:border-sky-800 dark:bg-slate-900 dark:text-sky-100"
      data-testid="implicit-accept-countdown"
    >
      <Icon name="clock" className="mt-0.5 h-4 w-4 shrink-0" />
      {left > 0 ? (
        <span>
          Unless {mine ? "you answer" : `${target} answers`}, the offer counts as accepted in{" "}
          <strong className="tabular-nums" suppressHydrationWarning>
            {formatDuration(Math.ceil(left / 1000) * 1000)}
          </strong>{" "}
          (implicit-accept policy).
        </span>
      ) : (
        <span>The offer to {mine ? "you" : target} now counts as accepted (implicit-accept policy); it can be committed.</span>
      )}
    </p>
  );
}

/** The panel, with refused attempts of its forms noted in the session's timeline (lib/client/refusals.ts). */
export function ActionPanel(props: Parameters<typeof PanelBody>[0]) {
  const { me } = useWhoAmI();
  const scope = useMemo(() => ({ sessionId: props.sessionId, actor: me?.participantId ?? "" }), [props.sessionId, me?.participantId]);
  return (
    <RefusalScope.Provider value={scope}>
      <PanelBody {...props} />
    </RefusalScope.Provider>
  );
}

function PanelBody({
  sessionId,
  view,
  metadata,
  othersMoved = 0,
}: {
  sessionId: string;
  view: SessionView;
  metadata: SessionMetadata | undefined;
  /** Sequence of the newest event someone else sent (timeline.ts newestSequenceNotBy): a success notice lasts until it moves. */
  othersMoved?: number;
}) {
  const { me } = useWhoAmI();
  const signedIn = Boolean(me);
  const { directory } = useDirectory(signedIn);
  const capabilities = useCapabilities(signedIn);
  const policyId = policyIdOf(view, metadata);
  const { policy } = usePolicySummary(policyId, signedIn);
  const now = useNow();
  const [open, setOpen] = useState<Choice | null>(null);
  const [notice, setNotice] = useState<{ text: string; othersMoved: number } | null>(null);
  // A success notice is about the state it changed; once someone else moves the session on, it is old news.
  const done = notice !== null && notice.othersMoved === othersMoved ? notice.text : null;
  const buttons = useRef(new Map<Choice, HTMLButtonElement>());
  const headingRef = useRef<HTMLHeadingElement | null>(null);

  const nameOf = useCallback((id: string) => nameIn(directory, id), [directory]);
  const actor = useMemo(() => (me ? { role: me.role, participantId: me.participantId } : null), [me]);
  const ctx = useMemo(() => decideContextFor({ metadata, policy, nameOf, now: now || Date.now() }), [metadata, policy, nameOf, now]);
  const panel = actor ? sessionPanel(actor, view, ctx) : { kind: "none" as const };
  const implicitAt = implicitAcceptAt(view, policy, policyId);
  const pending = pendingOfferOf(view);
  const rules = policy ?? (policyId === null ? DEFAULT_POLICY_SUMMARY : undefined);
  const brief = actor
    ? briefFor(actor, view, { policy: rules, policyId, ctx, nameOf, ...(ctx.expiresAt !== undefined ? { expiresAt: ctx.expiresAt } : {}) })
    : null;

  const allowedNow =
    panel.kind === "actions" ? new Set(panel.actions.filter((a) => a.decision.allowed).map((a) => a.action)) : new Set<Action>();
  // A form whose action became impossible (someone else moved first) closes.
  const actionOf = (c: Choice): Action => (c === "approve" || c === "reject" ? "commit" : c);
  const openStillAllowed = open !== null && allowedNow.has(actionOf(open));
  useEffect(() => {
    if (open !== null && !openStillAllowed) setOpen(null);
  }, [open, openStillAllowed]);

  // Closes `action`'s form, and only it: an action whose answer comes back
  // after the person has opened another form (a slow server) must not close
  // that one.
  const openNow = useRef<Choice | null>(open);
  useEffect(() => {
    openNow.current = open;
  }, [open]);
  const close = useCallback((action: Choice) => {
    if (openNow.current !== action) return;
    setOpen(null);
    requestAnimationFrame(() => {
      const b = buttons.current.get(action);
      if (b?.isConnected && b.getAttribute("aria-disabled") !== "true") b.focus();
      else headingRef.current?.focus();
    });
  }, []);
  const finished = useCallback(
    (action: Choice, sentence: string) => {
      setNotice({ text: sentence, othersMoved });
      close(action);
    },
    [close, othersMoved],
  );

  if (!view.started) return null;
  if (!me) {
    if (me === null) {
      return (
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="action-panel-signed-out">
          <a href={loginHref(`/sessions/${sessionId}`)} className="font-medium text-blue-800 underline dark:text-sky-300">
            Sign in
          </a>{" "}
          to act in this session.
        </p>
      );
    }
    return null;
  }

  const formProps = (action: Choice): SessionFormProps => ({
    sessionId,
    view,
    me: actor ?? { role: me.role, participantId: me.participantId },
    ctx,
    nameOf,
    onClose: () => close(action),
    onDone: (sentence) => finished(action, sentence),
  });
  const maxPayload = capabilities?.maxPayloadBytes || DEFAULT_MAX_PAYLOAD;

  const form = (action: Choice) => {
    const p = formProps(action);
    switch (action) {
      case "approve":
      case "reject":
        return <ApprovalForm {...p} decision={action} policyId={policyId} />;
      case "offer":
        return <OfferForm {...p} />;
      case "attachContext":
        return <AttachForm {...p} maxPayloadBytes={maxPayload} />;
      case "accept":
        return <RespondForm {...p} kind="accept" />;
      case "decline":
        return <RespondForm {...p} kind="decline" />;
      case "commit":
        return view.task ? <TaskCommitForm {...p} /> : <CommitForm {...p} />;
      case "cancel":
        return <CancelForm {...p} />;
      case "taskRequest":
        return <TaskRequestForm {...p} maxPayloadBytes={maxPayload} />;
      case "taskAccept":
        return <TaskRespondForm {...p} kind="accept" />;
      case "taskReject":
        return <TaskRespondForm {...p} kind="reject" />;
      case "taskUpdate":
        return <TaskUpdateForm {...p} />;
      case "taskComplete":
        return <TaskCompleteForm {...p} maxPayloadBytes={maxPayload} />;
      case "taskFail":
        return <TaskFailForm {...p} />;
      default:
        return null;
    }
  };

  const waiting = waitingFor(view, rules, nameOf);
  // Nothing to do here (viewer, or the session is over): one quiet line.
  if ((panel.kind === "read-only" || panel.kind === "closed") && implicitAt === undefined) {
    return (
      <section
        aria-label="Your actions"
        className="text-sm text-slate-700 dark:text-slate-300"
        data-testid="action-panel"
        data-panel={panel.kind}
      >
        <p className="flex items-start gap-1.5" data-testid={panel.kind === "read-only" ? "read-only-note" : "closed-note"}>
          <Icon name={panel.kind === "read-only" ? "user" : "seal"} className="mt-0.5 h-4 w-4 shrink-0" />
          {panel.kind === "read-only"
            ? `Watching as ${me.displayName} (viewer): read-only, no actions.${waiting ? ` ${waiting.sentence}` : ""}`
            : `No actions: ${panel.reason.charAt(0).toLowerCase()}${panel.reason.slice(1)}`}
        </p>
      </section>
    );
  }

  const actions = panel.kind === "actions" ? panel.actions : [];
  const allowed = actions.filter((a) => a.decision.allowed);

  // The approver commits by approving or rejecting, not through the generic commit form.
  interface ChoiceButton {
    choice: Choice;
    label: string;
    variant: "primary" | "secondary";
  }
  const choices = allowed.flatMap(({ action }): ChoiceButton[] => {
    if (action === "commit" && brief?.kind === "approval") {
      const canApprove = approvalFacts(view, nameOf, "approve", policyId).canApprove;
      return [
        ...(canApprove ? [{ choice: "approve", label: CHOICE_LABEL.approve, variant: "primary" } satisfies ChoiceButton] : []),
        { choice: "reject", label: CHOICE_LABEL.reject, variant: canApprove ? "secondary" : "primary" },
      ];
    }
    return [{ choice: action, label: LABEL[action] ?? action, variant: PRIMARY.has(action) ? "primary" : "secondary" }];
  });
  const buttonRow =
    choices.length > 0 ? (
      <div className="flex flex-wrap gap-2">
        {choices.map(({ choice, label, variant }) => (
          <Button
            key={choice}
            ref={(el) => {
              if (el) buttons.current.set(choice, el);
              else buttons.current.delete(choice);
            }}
            variant={variant}
            aria-expanded={open === choice}
            onClick={() => {
              setNotice(null);
              setOpen(open === choice ? null : choice);
            }}
            data-testid={`action-${choice}`}
            data-allowed="true"
          >
            {label}
          </Button>
        ))}
      </div>
    ) : null;
  const doneLine = done ? (
    <p className="flex items-start gap-2 text-sm text-emerald-900 dark:text-emerald-200" data-testid="action-done">
      <Icon name="check-circle" className="mt-0.5 h-4 w-4 shrink-0" /> {done}
    </p>
  ) : null;
  const openForm = open !== null && openStillAllowed ? <div key={open}>{form(open)}</div> : null;
  // Instead of actions others have to take: one line naming whom the session waits for.
  const waitingLine =
    waiting && (allowed.length === 0 || !waiting.on.includes(me.participantId)) ? (
      <p
        className="flex items-start gap-1.5 text-sm text-slate-700 dark:text-slate-300"
        data-testid="waiting-on"
        data-waiting-on={waiting.on.join(" ")}
      >
        <Icon name="clock" className="mt-0.5 h-4 w-4 shrink-0" />
        {waiting.sentence}
      </p>
    ) : null;

  // The person asked to act: the brief first, the actions in it.
  if (brief && panel.kind === "actions") {
    return (
      <div data-testid="action-panel" data-panel={panel.kind}>
        <h2 id="actions-title" ref={headingRef} tabIndex={-1} className="sr-only">
          Your actions as {me.displayName}
        </h2>
        <BriefCard brief={brief} nameOf={nameOf} now={now} actions={buttonRow} sticky={openForm === null}>
          {doneLine || openForm ? (
            <>
              {doneLine}
              {openForm}
            </>
          ) : null}
        </BriefCard>
      </div>
    );
  }

  // Nothing for this person to do now: the one line, no box.
  if (allowed.length === 0 && !doneLine && implicitAt === undefined && panel.kind === "actions") {
    return (
      <section aria-labelledby="actions-title" className="text-sm" data-testid="action-panel" data-panel={panel.kind}>
        <h2 id="actions-title" ref={headingRef} tabIndex={-1} className="sr-only">
          Your actions as {me.displayName}
        </h2>
        {waitingLine}
      </section>
    );
  }

  return (
    <section
      aria-labelledby="actions-title"
      className="space-y-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="action-panel"
      data-panel={panel.kind}
    >
      <h2 id="actions-title" ref={headingRef} tabIndex={-1} className="text-sm font-semibold outline-none">
        Your actions
        <span className="font-normal text-slate-700 dark:text-slate-300"> · as {me.displayName}</span>
      </h2>
      {implicitAt !== undefined && pending ? (
        <ImplicitAcceptNotice
          at={implicitAt}
          target={nameOf(pending.target)}
          mine={pending.target === me.participantId}
          now={now || Date.now()}
        />
      ) : null}
      {panel.kind === "read-only" ? (
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="read-only-note">
          You can watch this session live, but your account is read-only (viewer), so there is nothing to act on here.
        </p>
      ) : panel.kind === "closed" ? (
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="closed-note">
          {panel.reason}
        </p>
      ) : null}
      {doneLine}
      {buttonRow}
      {openForm}
      {waitingLine}
    </section>
  );
}
