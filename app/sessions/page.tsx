import { redirect } from "next/navigation";

// "/sessions" is an alias of the list at "/", keeping any filters.
export default async function SessionsAlias({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(await searchParams)) {
    if (typeof v === "string") params.set(k, v);
    else if (Array.isArray(v) && typeof v[0] === "string") params.set(k, v[0]);
  }
  const qs = params.toString();
  redirect(qs ? `/?${qs}` : "/");
}
