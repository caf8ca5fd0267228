// The runtime kernel (kernel.ts) and what its users need of it. The folder's
// seams: admission.ts (the rules an envelope passes, and replay through the
// same rules), residents.ts (what is resident, closed sessions from storage),
// session.ts (a session in memory and closed), fanout.ts (who is told), snapshot.ts (ListSessions / WatchSessions), list-rows.ts (history
// pages and the list-row backfill), policies.ts (the policy registry).
export { ControlError, Kernel, type KernelOptions, type LoadReport } from "./kernel";
export type { Delivered, ListRowListener, Logger } from "./fanout";
export { HISTORY_PAGE_BYTES, HISTORY_PAGE_RECORDS } from "./list-rows";
