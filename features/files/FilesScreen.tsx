"use client";
// /files: the v0.1 file-based handoffs of the directories the console
// watches (BATON_HANDOFF_DIRS), newest change first, live through the
// WatchFileHandoffs stream. The status and directory filters live in the URL.

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";
import { roleAtLeast } from "@/lib/authz/roles";
import type { FileHandoff } from "@/lib/gen/baton/v1/files_pb";
import type { Directory } from "@/lib/views/directory";
import {
  FILE_STATUSES,
  FILE_STATUS_INFO,
  fileHref,
  parseFileFilter,
  serializeFileFilter,
  type FileListFilter,
} from "@/lib/views/file-handoffs";
import { clipLine } from "@/lib/views/clip";
import { useDirectory } from "@/lib/client/use-console-data";
import { useFileList, useFileSettings, useFileWatch } from "@/lib/client/use-file-handoffs";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";
import { Icon } from "@/components/ui/Icon";
import { RelativeTime } from "@/components/ui/Time";
import { Button, Field, Select } from "@/components/ui/forms";
import { FileStatusBadge, ModeLabel, Who } from "@/features/files/FileBits";
import { OfferFileForm } from "@/features/files/OfferFileForm";

function useFileFilter(): [FileListFilter, (patch: Partial<FileListFilter>) => void] {
  const params = useSearchParams();
  const key = params.toString();
  const filter = useMemo(() => parseFileFilter(new URLSearchParams(key)), [key]);
  const set = useCallback((patch: Partial<FileListFilter>) => {
    const next = { ...parseFileFilter(new URLSearchParams(window.location.search)), ...patch };
    window.history.pushState(null, "", `${window.location.pathname}${serializeFileFilter(next)}`);
  }, []);
  return [filter, set];
}

function Row({ h, directory, showDir }: { h: FileHandoff; directory: Directory; showDir: boolean }) {
  return (
    <li
      className="rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="file-row"
      data-task={h.taskId}
      data-status={h.valid ? h.status : "invalid"}
    >
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1.5">
        <FileStatusBadge handoff={h} />
        <ModeLabel />
        <span className="text-xs text-slate-700 dark:text-slate-300">
          changed <RelativeTime ms={h.lastChangeUnixMs} />
        </span>
      </div>
      <Link
        href={fileHref(h.dirKey, h.taskId)}
        className="mt-1.5 block text-sm font-medium break-words text-blue-800 hover:underline dark:text-sky-300"
        data-testid="file-open"
      >
        {h.valid || h.description ? clipLine(h.description || h.taskId) : h.name}
      </Link>
      {!h.valid && h.problem ? (
        <p className="mt-1 flex items-start gap-1 text-xs break-words text-red-800 dark:text-red-300" data-testid="file-problem">
          <Icon name="alert" className="mt-px h-3.5 w-3.5 shrink-0" /> {clipLine(h.problem)}
        </p>
      ) : null}
      <dl className="mt-1.5 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700 dark:text-slate-300">
        {h.fromAgent ? (
          <div className="flex min-w-0 gap-1">
            <dt>From</dt>
            <dd className="min-w-0 font-medium">
              <Who id={h.fromAgent} directory={directory} />
            </dd>
          </div>
        ) : null}
        {h.status ? (
          <div className="flex min-w-0 gap-1">
            <dt>To</dt>
            <dd className="min-w-0 font-medium">
              <Who id={h.toAgent} directory={directory} />
            </dd>
          </div>
        ) : null}
        <div className="flex min-w-0 gap-1">
          <dt>Task</dt>
          <dd className="min-w-0 truncate font-mono">{h.taskId}</dd>
        </div>
        {showDir ? (
          <div className="flex min-w-0 gap-1">
            <dt>In</dt>
            <dd className="min-w-0 truncate font-mono">{h.dir}</dd>
          </div>
        ) : null}
      </dl>
    </li>
  );
}

function NotConfigured() {
  return (
    <div
      className="rounded-lg border border-dashed border-slate-300 px-5 py-8 text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300"
      data-testid="files-disabled"
    >
      <p className="font-medium text-slate-900 dark:text-slate-100">This console watches no v0.1 handoff directories.</p>
      <p className="mt-2">
        Start it with <code className="font-mono">BATON_HANDOFF_DIRS</code> set to one or more directories (comma-separated), for example{" "}
        <code className="font-mono">BATON_HANDOFF_DIRS=.handoffs npm start</code>. Each JSON file there (one per handoff, v0.1&apos;s{" "}
        <code className="font-mono">&lt;task_id&gt;.json</code>) then shows up here live, with the history Baton records for it.
      </p>
    </div>
  );
}

export function FilesScreen() {
  const { me } = useWhoAmI();
  const signedIn = Boolean(me);
  const { settings, error: settingsError } = useFileSettings();
  const enabled = settings?.enabled === true;
  const [filter, setFilter] = useFileFilter();
  const list = useFileList(filter, enabled);
  const connection = useFileWatch(enabled);
  const { directory } = useDirectory(signedIn);
  const dirs = settings?.directories ?? [];
  const canOffer = me ? roleAtLeast(me.role, "operator") : false;
  const filtered = filter.status !== "" || filter.dir !== "";

  return (
    <div className="mx-auto max-w-4xl space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold tracking-tight sm:text-2xl">File handoffs</h1>
        <ModeLabel />
        {enabled ? <ConnectionBadge info={connection} label="File handoffs" /> : null}
      </div>
      {settingsError ? (
        <p className="text-sm text-red-800 dark:text-red-300" role="alert">
          Could not load the file handoff settings: {settingsError instanceof Error ? settingsError.message : String(settingsError)}
        </p>
      ) : null}
      {settings && !enabled ? <NotConfigured /> : null}
      {enabled ? (
        <>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            v0.1 handoffs are JSON files in {dirs.length === 1 ? "the directory" : "the directories"}{" "}
            {dirs.map((d, i) => (
              <span key={d.key}>
                {i > 0 ? ", " : ""}
                <code className="font-mono break-all">{d.path}</code>
                {d.mode === "missing" ? " (not there yet)" : ""}
              </span>
            ))}
            . Baton records every change it sees{settings?.bridge ? " and mirrors them into MACP Task sessions" : ""}.
          </p>
          {canOffer ? (
            <details className="rounded-lg border border-slate-200 p-3 dark:border-slate-800" data-testid="offer-file">
              <summary className="cursor-pointer text-sm font-semibold">Offer a handoff</summary>
              <div className="mt-3">
                <OfferFileForm directories={dirs} {...(filter.dir ? { initialDir: filter.dir } : {})} />
              </div>
            </details>
          ) : null}
          <div className="flex flex-wrap items-end gap-3" role="group" aria-label="Filters">
            <Field id="files-status" label="Status" className="w-44">
              <Select
                id="files-status"
                value={filter.status}
                onChange={(e) => setFilter({ status: e.target.value as FileListFilter["status"] })}
                data-testid="files-status"
              >
                <option value="">All</option>
                {FILE_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {FILE_STATUS_INFO[s].label}
                  </option>
                ))}
              </Select>
            </Field>
            {dirs.length > 1 ? (
              <Field id="files-dir" label="Directory" className="min-w-0 flex-1 sm:max-w-sm">
                <Select id="files-dir" value={filter.dir} onChange={(e) => setFilter({ dir: e.target.value })}>
                  <option value="">All directories</option>
                  {dirs.map((d) => (
                    <option key={d.key} value={d.key}>
                      {d.path}
                    </option>
                  ))}
                </Select>
              </Field>
            ) : null}
            {filtered ? (
              <Button variant="quiet" onClick={() => setFilter({ status: "", dir: "" })}>
                Clear filters
              </Button>
            ) : null}
          </div>
          {list.error ? (
            <p className="text-sm text-red-800 dark:text-red-300" role="alert">
              Could not load the handoffs: {list.error instanceof Error ? list.error.message : String(list.error)}
            </p>
          ) : null}
          {!list.loaded ? (
            <p className="text-sm text-slate-700 dark:text-slate-300">Loading handoffs…</p>
          ) : list.rows.length === 0 ? (
            <div
              className="rounded-lg border border-dashed border-slate-300 px-5 py-8 text-center text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300"
              data-testid="files-empty"
            >
              {filtered
                ? "No handoff matches these filters."
                : "No handoffs yet. When an agent writes a v0.1 file into the directory, or someone offers one here, it appears at once."}
            </div>
          ) : (
            <ul className="space-y-2" aria-label="File handoffs, newest change first" data-testid="file-list">
              {list.rows.map((h) => (
                <Row key={`${h.dirKey}/${h.name}`} h={h} directory={directory} showDir={dirs.length > 1} />
              ))}
            </ul>
          )}
          {list.hasMore ? (
            <Button onClick={list.loadMore} pending={list.loadingMore}>
              Show more
            </Button>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
