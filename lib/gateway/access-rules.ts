// Who may call each method of the console's Connect services: one table,
// read by the access interceptor (request-auth.ts) before any handler runs.
// A method without a rule is refused (request-auth.test.ts checks that every
// method of every console service has one); the types make each service's
// table complete.
import type { DescService } from "@bufbuild/protobuf";
import type { Role } from "@/lib/authz/roles";
import { ActionService } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { FileHandoffService } from "@/lib/gen/baton/v1/files_pb";

export type AccessRule =
  | {
      /**
       * "always": a signed-in caller on every call. "reads": only when the
       * console requires sign-in to read (BATON_REQUIRE_SIGN_IN, the default)
       * and has accounts; otherwise open to anyone.
       */
      signIn: "always" | "reads";
      /** Check the x-baton-csrf token and the request's origin (calls that change something). */
      csrf: boolean;
      /** Lowest role allowed; default viewer (everyone signed in). */
      minimumRole?: Role;
      /** Still served while the console shuts down (otherwise UNAVAILABLE first). */
      whileClosing?: true;
    }
  | {
      /**
       * The service checks sign-in itself: the v0.1 file hand-offs, whose
       * reads answer "disabled" before any sign-in and whose rules depend on
       * whether the console has accounts (lib/gateway/file-routes.ts).
       */
      signIn: "by-service";
    };

type Rules<S extends DescService & { method: object }> = { readonly [K in keyof S["method"]]: AccessRule };

const READ: AccessRule = { signIn: "reads", csrf: false };
/** Signed in, no CSRF: reads of the signed-in person's own data. */
const SIGNED_IN_READ: AccessRule = { signIn: "always", csrf: false };
/** Signed in, CSRF checked: anything that changes something. */
const ACT: AccessRule = { signIn: "always", csrf: true };
const ADMIN_ACT: AccessRule = { signIn: "always", csrf: true, minimumRole: "admin" };
const ADMIN_READ: AccessRule = { signIn: "always", csrf: false, minimumRole: "admin" };
const FILES: AccessRule = { signIn: "by-service" };

const CONSOLE: Rules<typeof ConsoleService> = {
  listSessionPage: READ,
  watchSessionChanges: READ,
  watchSessionList: READ,
  subscribeSession: READ,
  getSessionSummary: READ,
  getGatewayStats: { ...READ, whileClosing: true },
};

const ACTIONS: Rules<typeof ActionService> = {
  startSession: ACT,
  offer: ACT,
  attachContext: ACT,
  accept: ACT,
  decline: ACT,
  commit: ACT,
  cancel: ACT,
  taskRequest: ACT,
  taskAccept: ACT,
  taskReject: ACT,
  taskUpdate: ACT,
  taskComplete: ACT,
  taskFail: ACT,
  taskCommit: ACT,
  listDirectory: SIGNED_IN_READ,
  watchInbox: SIGNED_IN_READ,
  getPolicy: SIGNED_IN_READ,
  getCapabilities: SIGNED_IN_READ,
  runDemo: ADMIN_ACT,
  controlDemo: ADMIN_ACT,
  listWebhookDeliveries: ADMIN_READ,
  listHandoffTemplates: SIGNED_IN_READ,
  saveHandoffTemplate: ACT,
  deleteHandoffTemplate: ACT,
  startEscalation: ACT,
  getEscalation: SIGNED_IN_READ,
  cancelEscalation: ACT,
};

const FILE_HANDOFFS: Rules<typeof FileHandoffService> = {
  getFileHandoffSettings: FILES,
  listFileHandoffs: FILES,
  getFileHandoff: FILES,
  watchFileHandoffs: FILES,
  offerFileHandoff: FILES,
  actOnFileHandoff: FILES,
};

/** The services the console serves, with their tables. */
export const ACCESS_TABLES: ReadonlyArray<{ service: DescService; rules: Readonly<Record<string, AccessRule>> }> = [
  { service: ConsoleService, rules: CONSOLE },
  { service: ActionService, rules: ACTIONS },
  { service: FileHandoffService, rules: FILE_HANDOFFS },
];

const BY_PATH = new Map<string, AccessRule>();
for (const { service, rules } of ACCESS_TABLES) {
  for (const m of service.methods) {
    const rule = rules[m.localName];
    if (rule) BY_PATH.set(`${service.typeName}/${m.name}`, rule);
  }
}

/** The rule for a method ("baton.v1.ActionService", "Offer"), or undefined: refuse. */
export function accessRuleFor(serviceTypeName: string, methodName: string): AccessRule | undefined {
  return BY_PATH.get(`${serviceTypeName}/${methodName}`);
}
