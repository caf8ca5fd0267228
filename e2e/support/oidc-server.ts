// The local OpenID Connect provider of the e2e suite (tests/support/oidc-provider),
// on the run's port so the apps can be started with BATON_OIDC_ISSUER pointing at
// it; it sends people back to either app (BATON_E2E_APP_ORIGINS, comma-separated).
// Run as a webServer by playwright.config.ts; stops on SIGTERM.
import { startOidcProvider } from "../../tests/support/oidc-provider";
import { OIDC } from "./people";

const appOrigins = (process.env.BATON_E2E_APP_ORIGINS ?? "").split(",").filter(Boolean);
if (appOrigins.length === 0) throw new Error("BATON_E2E_APP_ORIGINS must name the apps' origins (playwright.config.ts)");

const op = await startOidcProvider({
  port: OIDC.port,
  clientId: OIDC.clientId,
  clientSecret: OIDC.clientSecret,
  redirectUris: appOrigins.map((origin) => `${origin}/auth/oidc/callback`),
  accounts: [
    {
      sub: OIDC.account.sub,
      username: OIDC.account.username,
      password: OIDC.account.password,
      claims: { email: "erin@example.com", email_verified: true, name: "Erin (IdP)" },
    },
  ],
});
process.stdout.write(`e2e OIDC provider at ${op.issuer}\n`);
const stop = (): void => {
  void op.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
