// What /sessions/<id> and /sessions/<id>/report say for a link whose id is not a session id.
import Link from "next/link";

export function NotASessionId() {
  return (
    <div className="space-y-3">
      <h1 className="text-xl font-semibold">Not a session id</h1>
      <p className="text-sm text-slate-700 dark:text-slate-300">
        Session ids are UUIDs or at least 22 letters, digits, “-” or “_”. Check the link, or pick the session from the list.
      </p>
      <Link href="/" className="text-sm text-blue-800 underline dark:text-sky-300">
        Back to sessions
      </Link>
    </div>
  );
}
