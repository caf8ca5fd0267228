import type { Metadata } from "next";
import { DemoRunner } from "@/features/admin/DemoRunner";
import { WebhookDeliveries } from "@/features/admin/WebhookDeliveries";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "Run demo" };

export default function AdminPage() {
  return (
    <div className="mx-auto max-w-7xl space-y-4">
      <h1 className="text-xl font-semibold tracking-tight sm:text-2xl">Run demo</h1>
      <p className="max-w-3xl text-sm text-slate-700 dark:text-slate-300">
        Plays one of the protocol demos against this console’s runtime, as <code className="font-mono">npm run demo</code> does. Its
        sessions appear in the list live.
      </p>
      <QueryProvider>
        <DemoRunner />
        <div className="max-w-3xl">
          <WebhookDeliveries />
        </div>
      </QueryProvider>
    </div>
  );
}
