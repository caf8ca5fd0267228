import type { Metadata } from "next";
import { LoginForm } from "@/features/sign-in/LoginForm";

export const metadata: Metadata = { title: "Sign in" };
// Errors and the return path come from the query string on every visit.
export const dynamic = "force-dynamic";

function first(v: string | string[] | undefined): string | null {
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === "string" && s !== "" ? s : null;
}

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  return (
    <div className="mx-auto mt-6 max-w-sm space-y-5 sm:mt-12">
      <div className="space-y-1">
        <h1 className="text-2xl font-semibold tracking-tight">Sign in to Baton</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300">Watch and drive handoffs and tasks as yourself.</p>
      </div>
      <div className="rounded-lg border border-slate-200 p-5 dark:border-slate-800">
        <LoginForm returnTo={first(sp.returnTo) ?? "/"} error={first(sp.error)} reason={first(sp.reason)} />
      </div>
      <p className="text-xs text-slate-600 dark:text-slate-400">
        No account yet? An admin adds people with <code className="font-mono whitespace-nowrap">npm run users -- add</code>.
      </p>
    </div>
  );
}
