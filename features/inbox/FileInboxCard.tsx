"use client";
// v0.1 file handoffs waiting on me, on /inbox: offers to my participant id or
// to anyone (not my own), and those I accepted and still have to complete.
// Fed by the FileHandoffService (lib/gateway/file-inbox.ts decides what waits
// on whom) and kept live by its watch stream. Shown only when the console
// watches v0.1 handoff directories.

import Link from "next/link";
import { fileHref } from "@/lib/views/file-handoffs";
import { clipLine } from "@/lib/views/clip";
import { nameIn } from "@/lib/views/directory";
import { useDirectory } from "@/lib/client/use-console-data";
import { useFileSettings, useFilesWaitingOnMe, useFileWatch } from "@/lib/client/use-file-handoffs";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { FileStatusBadge, ModeLabel } from "@/features/files/FileBits";

const SHOWN = 10;

export function FileInboxCard() {
  const { me } = useWhoAmI();
  const { settings } = useFileSettings(Boolean(me));
  const enabled = Boolean(me) && settings?.enabled === true;
  useFileWatch(enabled);
  const { rows, loaded, more } = useFilesWaitingOnMe(enabled);
  const { directory } = useDirectory(enabled);
  if (!enabled) return null;
  const count = more ? `${rows.length}+` : String(rows.length);
  return (
    <section
      className="space-y-2 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      aria-labelledby="file-inbox-title"
      data-testid="file-inbox"
    >
      <div className="flex flex-wrap items-center gap-2">
        <h2 id="file-inbox-title" className="text-base font-semibold">
          File handoffs for you
        </h2>
        <ModeLabel />
        <span className="text-sm text-slate-700 dark:text-slate-300" data-testid="file-inbox-count">
          {loaded ? (rows.length === 0 ? "none right now" : `${count} waiting`) : "loading…"}
        </span>
        <Link
          href="/files?status=offered"
          className="ml-auto inline-flex items-center gap-1 text-sm font-semibold text-blue-800 hover:underline dark:text-sky-300"
        >
          All file handoffs <Icon name="chevron-right" className="h-3.5 w-3.5" />
        </Link>
      </div>
      {rows.length > 0 ? (
        <ul className="space-y-1.5">
          {rows.slice(0, SHOWN).map((h) => (
            <li
              key={`${h.dirKey}/${h.name}`}
              className="flex flex-wrap items-center gap-x-2 gap-y-1 text-sm"
              data-testid="file-inbox-item"
              data-task={h.taskId}
            >
              <FileStatusBadge handoff={h} />
              <Link
                href={fileHref(h.dirKey, h.taskId)}
                className="min-w-0 font-medium break-words text-blue-800 hover:underline dark:text-sky-300"
              >
                {clipLine(h.description || h.taskId)}
              </Link>
              <span className="text-xs text-slate-700 dark:text-slate-300">
                {h.status === "offered"
                  ? `offered by ${nameIn(directory, h.fromAgent)}${h.toAgent === "" ? " to anyone" : ""}`
                  : "accepted by you: complete it or mark it failed"}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {rows.length > SHOWN ? <p className="text-xs text-slate-700 dark:text-slate-300">and {rows.length - SHOWN} more.</p> : null}
    </section>
  );
}
