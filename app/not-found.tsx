import Link from "next/link";

export default function NotFound() {
  return (
    <div className="space-y-3">
      <h1 className="text-xl font-semibold">Page not found</h1>
      <p className="text-sm text-slate-700 dark:text-slate-300">There is nothing at this address.</p>
      <Link href="/" className="text-sm text-blue-800 underline dark:text-sky-300">
        Go to sessions
      </Link>
    </div>
  );
}
