// The runtime kernel (kernel.ts) and what its users need of it. The folder's
// seams:
//   send.ts       the Send path: an envelope from the RPC to its Ack
//   admission.ts  the rules an envelope passes, and replay through the same rules
//   lifecycle.ts  expiry (lazy and the TTL sweep) and Cancel / Suspend / Resume
//   writes.ts     the write path: durable first, then publish; rebuild on a storage failure
//   residents.ts  what is resident; closed sessions from storage; restart and reload
//   session.ts    a session in memory and closed, and the closed cache
//   fanout.ts     who is told when something becomes durable
//   snapshot.ts   ListSessions / WatchSessions
//   list-rows.ts  history page sizes and the list-row backfill
//   policies.ts   the policy registry
export { ControlError, Kernel, type KernelOptions, type LoadReport } from "./kernel";
export type { Delivered, ListRowListener, Logger } from "./fanout";
export { HISTORY_PAGE_BYTES, HISTORY_PAGE_RECORDS } from "./list-rows";
