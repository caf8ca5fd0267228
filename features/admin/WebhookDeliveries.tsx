"use client";
// Admins' view of outbound notifications: each webhook from the webhooks file
// with its recent deliveries, failures and next retries
// (ActionService.ListWebhookDeliveries), refreshed every 10 s.

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { roleAtLeast } from "@/lib/authz/roles";
import type { WebhookDelivery } from "@/lib/gen/baton/v1/actions_pb";
import { sessionHref } from "@/lib/views/route-params";
import { actionClient } from "@/lib/client/transport";
import { useWhoAmI } from "@/lib/client/use-whoami";

const time = (ms: bigint): string => (ms > 0n ? new Date(Number(ms)).toLocaleString() : "—");

function outcome(d: WebhookDelivery): string {
  if (d.status === "delivered") return `delivered (${d.lastStatusCode})`;
  const why = d.lastError || "not tried yet";
  return d.status === "failed" ? `gave up: ${why}` : d.attempts === 0 ? "waiting" : `failing: ${why}`;
}

export function WebhookDeliveries() {
  const { me } = useWhoAmI();
  const admin = Boolean(me && roleAtLeast(me.role, "admin"));
  const q = useQuery({
    queryKey: ["webhook-deliveries"],
    queryFn: ({ signal }) => actionClient().listWebhookDeliveries({ limit: 10 }, { signal }),
    enabled: admin,
    refetchInterval: 10_000,
  });
  if (!admin) return null;
  return (
    <section aria-labelledby="webhooks-heading" className="space-y-3" data-testid="webhook-deliveries">
      <h2 id="webhooks-heading" className="text-lg font-semibold tracking-tight">
        Notifications (webhooks)
      </h2>
      {q.isError ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          Could not read the webhook deliveries.
        </p>
      ) : !q.data ? (
        <p className="text-sm text-slate-700 dark:text-slate-300">Loading…</p>
      ) : !q.data.configured ? (
        <p className="text-sm text-slate-700 dark:text-slate-300">
          No webhooks are configured (<code className="font-mono">BATON_WEBHOOKS_FILE</code>, by default{" "}
          <code className="font-mono">webhooks.json</code> in the data folder).
        </p>
      ) : (
        q.data.hooks.map((h) => (
          <div key={h.id} className="space-y-1">
            <h3 className="text-sm font-medium">
              {h.id}{" "}
              <span className="font-normal text-slate-600 dark:text-slate-400">
                ({h.format} → {h.destination})
              </span>
              {" · "}
              <span className={h.failed > 0n ? "text-red-700 dark:text-red-300" : ""}>
                {String(h.pending)} pending, {String(h.failed)} given up
              </span>
            </h3>
            {h.recent.length === 0 ? (
              <p className="text-sm text-slate-700 dark:text-slate-300">Nothing sent yet.</p>
            ) : (
              <div className="overflow-x-auto">
                <table className="w-full text-left text-sm">
                  <caption className="sr-only">Recent deliveries to {h.id}, newest first</caption>
                  <thead className="text-xs text-slate-600 dark:text-slate-400">
                    <tr>
                      <th scope="col" className="py-1 pr-3 font-medium">
                        Event
                      </th>
                      <th scope="col" className="py-1 pr-3 font-medium">
                        Session
                      </th>
                      <th scope="col" className="py-1 pr-3 font-medium">
                        Result
                      </th>
                      <th scope="col" className="py-1 pr-3 font-medium">
                        Attempts
                      </th>
                      <th scope="col" className="py-1 pr-3 font-medium">
                        Last attempt
                      </th>
                      <th scope="col" className="py-1 font-medium">
                        Next retry
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {h.recent.map((d) => (
                      <tr key={d.deliveryId} className="border-t border-slate-200 dark:border-slate-700" title={`Delivery ${d.deliveryId}`}>
                        <td className="py-1 pr-3 font-mono text-xs">{d.event}</td>
                        <td className="py-1 pr-3">
                          <Link className="underline" href={sessionHref(d.sessionId)}>
                            {d.sessionId.slice(0, 8)}
                          </Link>
                        </td>
                        <td className={`py-1 pr-3 ${d.status === "delivered" ? "" : "text-red-700 dark:text-red-300"}`}>{outcome(d)}</td>
                        <td className="py-1 pr-3">{d.attempts}</td>
                        <td className="py-1 pr-3 whitespace-nowrap">{time(d.lastAttemptUnixMs)}</td>
                        <td className="py-1 whitespace-nowrap">{d.status === "pending" ? time(d.nextAttemptUnixMs) : "—"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        ))
      )}
    </section>
  );
}
