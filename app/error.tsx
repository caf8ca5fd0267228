"use client";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="space-y-3 rounded-lg border border-red-300 bg-red-50 p-5 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50">
      <h1 className="text-lg font-semibold">Something went wrong on this page</h1>
      <p className="text-sm">
        {error.message || "Unexpected error"}
        {error.digest ? ` (ref ${error.digest})` : ""}. Live data is unaffected; reload or try again.
      </p>
      <button
        type="button"
        onClick={reset}
        className="rounded-md bg-red-800 px-3 py-1.5 text-sm font-medium text-white dark:bg-red-200 dark:text-red-950"
      >
        Try again
      </button>
    </div>
  );
}
