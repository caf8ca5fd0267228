// The people of the e2e suite: console accounts created in each app's e2e
// users file before the app starts (e2e/support/seed-users.ts), each with a
// signed-in browser state per app saved by global setup (authFile).

import path from "node:path";
import { currentApp, type AppName } from "./apps";
import { e2ePorts } from "./ports";

export const E2E_PASSWORD = "e2e correct horse battery";

export interface E2ePerson {
  username: string;
  name: string;
  role: "viewer" | "operator" | "approver" | "admin";
  /** Linked identity-provider address (OIDC test). */
  email?: string;
  /** Starts with a one-time password to change. */
  mustChangePassword?: boolean;
}

export const PEOPLE = {
  ruth: { username: "ruth", name: "Ruth Admin", role: "admin" },
  alice: { username: "alice", name: "Alice Ng", role: "operator" },
  bob: { username: "bob", name: "Bob Ito", role: "operator" },
  carol: { username: "carol", name: "Carol Lee", role: "approver" },
  dave: { username: "dave", name: "Dave Park", role: "operator" },
  victor: { username: "victor", name: "Victor Viewer", role: "viewer" },
  // The reader of the older suites (watching agents' sessions).
  wendy: { username: "wendy", name: "Wendy Watch", role: "viewer" },
  erin: { username: "erin", name: "Erin Diaz", role: "approver", email: "erin@example.com" },
  frank: { username: "frank", name: "Frank New", role: "operator", mustChangePassword: true },
} as const satisfies Record<string, E2ePerson>;

export type PersonKey = keyof typeof PEOPLE;

/** People signed in by global setup (frank signs in himself: his first sign-in is the test). */
export const SIGNED_IN: readonly PersonKey[] = ["ruth", "alice", "bob", "carol", "dave", "victor", "wendy"];

export const AUTH_DIR = path.join(process.cwd(), ".baton", "e2e-auth");

/**
 * The person's signed-in browser state on an app (by default the running
 * test's: e2e/support/apps.ts). Each app has its own sign-ins; both apps are
 * on 127.0.0.1, where cookies are shared by every port, so a context must
 * only ever hold the cookies of the app it talks to.
 */
export function authFile(person: PersonKey, app: AppName = currentApp().name): string {
  return path.join(AUTH_DIR, app, `${person}.json`);
}

/** The local identity provider of the OIDC test (started by playwright.config.ts). */
export const OIDC = {
  // Chosen per run by playwright.config.ts (e2e/support/ports.ts).
  get port(): number {
    return e2ePorts().oidc;
  },
  clientId: "baton-e2e",
  clientSecret: "baton-e2e-oidc-client-secret-0123456789",
  account: { sub: "sub-erin", username: "erin-idp", password: "erin-idp-password" },
};
