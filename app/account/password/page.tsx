import type { Metadata } from "next";
import { ChangePasswordForm } from "@/features/sign-in/ChangePasswordForm";

export const metadata: Metadata = { title: "Change password" };
export const dynamic = "force-dynamic";

export default async function ChangePasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const raw = (await searchParams).returnTo;
  const returnTo = typeof raw === "string" ? raw : "/";
  return (
    <div className="mx-auto mt-6 max-w-sm space-y-5 sm:mt-12">
      <h1 className="text-2xl font-semibold tracking-tight">Change your password</h1>
      <div className="rounded-lg border border-slate-200 p-5 dark:border-slate-800">
        <ChangePasswordForm returnTo={returnTo} />
      </div>
    </div>
  );
}
