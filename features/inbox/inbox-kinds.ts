// InboxItemKind's values (lib/gen/baton/v1/actions_pb), each typed as its
// generated member. The inbox's first-load code reads them from here rather
// than from the generated module, whose file descriptors pull protobuf-es
// into the JavaScript loaded before `load`; inbox-kinds.test.ts checks every
// value against the generated enum.

import type { InboxItemKind } from "@/lib/gen/baton/v1/actions_pb";

export const INBOX_ITEM_KIND: { readonly [K in keyof typeof InboxItemKind]: (typeof InboxItemKind)[K] } = {
  UNSPECIFIED: 0 as InboxItemKind.UNSPECIFIED,
  OFFER: 1 as InboxItemKind.OFFER,
  APPROVAL: 2 as InboxItemKind.APPROVAL,
  TASK: 3 as InboxItemKind.TASK,
  APPROVAL_AHEAD: 4 as InboxItemKind.APPROVAL_AHEAD,
  ESCALATION: 5 as InboxItemKind.ESCALATION,
  DECLINED: 6 as InboxItemKind.DECLINED,
  ACCEPTED: 7 as InboxItemKind.ACCEPTED,
  CLOSED: 8 as InboxItemKind.CLOSED,
};

export type InboxItemKindValue = InboxItemKind;
