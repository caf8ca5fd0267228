// "Nothing needs you right now": /inbox when the stream says nothing waits.

export function InboxEmpty() {
  return (
    <div
      className="rounded-lg border border-dashed border-slate-300 px-5 py-8 text-center text-sm text-slate-700 dark:border-slate-700 dark:text-slate-300"
      data-testid="inbox-empty"
    >
      Nothing needs you right now. Offers made to you, commits that need your approval and tasks assigned to you show up here as they
      happen.
    </div>
  );
}
