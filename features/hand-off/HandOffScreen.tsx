"use client";
// /handoff: the "Hand off…" dialog as a page of its own, so it deep-links
// (/handoff?template=<id> opens it prefilled from a saved template). Closing
// it goes back to where it was opened from (?from=, a path in the console),
// else to the sessions list; a finished hand-off opens its session.

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";
import { decide } from "@/lib/authz/decide";
import { sessionHref } from "@/lib/views/route-params";
import { safeReturnTo } from "@/lib/views/return-to";
import { actionClient } from "@/lib/client/transport";
import { useCapabilities, useDirectory } from "@/lib/client/use-console-data";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { HandOffDialog } from "@/features/hand-off/HandOffDialog";
import type { TemplatesApi } from "@/features/hand-off/use-hand-off-dialog";

const TEMPLATES_KEY = ["baton", "handoff-templates"] as const;

function useTemplates(enabled: boolean): TemplatesApi {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: TEMPLATES_KEY,
    queryFn: ({ signal }) => actionClient().listHandoffTemplates({}, { signal }),
    enabled,
    staleTime: 30_000,
    retry: 2,
  });
  return useMemo(
    () => ({
      templates: q.data?.templates ?? [],
      max: q.data?.maxTemplates ?? 0,
      loaded: q.data !== undefined || q.isError,
      error: q.isError,
      async save(fields) {
        const res = await actionClient().saveHandoffTemplate({ template: fields });
        await qc.invalidateQueries({ queryKey: TEMPLATES_KEY });
        return res.template;
      },
      async remove(id) {
        const res = await actionClient().deleteHandoffTemplate({ id });
        await qc.invalidateQueries({ queryKey: TEMPLATES_KEY });
        return res.deleted;
      },
    }),
    [q.data, q.isError, qc],
  );
}

export function HandOffScreen() {
  const router = useRouter();
  const params = useSearchParams();
  const { me } = useWhoAmI();
  const allowed = me ? decide({ role: me.role, participantId: me.participantId }, undefined, "startSession") : undefined;
  const can = allowed?.allowed === true;
  const { directory, loaded, error } = useDirectory(can);
  const caps = useCapabilities(can);
  const templates = useTemplates(can);
  const from = safeReturnTo(params.get("from"));
  const templateId = params.get("template") ?? "";

  const close = useCallback(() => router.push(from), [router, from]);
  const done = useCallback((sessionId: string) => router.push(sessionHref(sessionId)), [router]);
  const onTemplateChange = useCallback(
    (id: string) => {
      const next = new URLSearchParams(params.toString());
      if (id === "") next.delete("template");
      else next.set("template", id);
      const q = next.toString();
      window.history.replaceState(null, "", q === "" ? "/handoff" : `/handoff?${q}`);
    },
    [params],
  );

  return (
    <div className="mx-auto max-w-3xl space-y-4">
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link href={from} className="inline-flex items-center gap-1 text-blue-800 hover:underline dark:text-sky-300">
          <span aria-hidden="true">←</span> Back
        </Link>
      </nav>
      <h1 className="text-xl font-semibold tracking-tight sm:text-2xl">Hand off</h1>
      {!me ? null : !can ? (
        <p className="rounded-md border border-slate-300 px-3 py-2 text-sm dark:border-slate-700" data-testid="hand-off-denied">
          {allowed && !allowed.allowed ? allowed.reason : null}
        </p>
      ) : (!loaded && !error) || !caps ? (
        <p className="text-sm text-slate-700 dark:text-slate-300">Loading people and agents…</p>
      ) : (
        <>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Hand a responsibility to someone in one step. Prefer the protocol&apos;s steps?{" "}
            <Link href="/sessions/new" className="text-blue-800 underline dark:text-sky-300">
              Start a session step by step
            </Link>
            .
          </p>
          <HandOffDialog
            me={me}
            directory={directory}
            maxPayloadBytes={caps.maxPayloadBytes}
            templates={templates}
            initialTemplateId={templateId}
            onTemplateChange={onTemplateChange}
            onClose={close}
            onDone={done}
          />
        </>
      )}
    </div>
  );
}
