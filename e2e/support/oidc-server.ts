// The local OpenID Connect provider of the e2e suite (tests/support/oidc-provider),
// on a fixed port so the app can be started with BATON_OIDC_ISSUER pointing at
// it. Run as a webServer by playwright.config.ts; stops on SIGTERM.
import { startOidcProvider } from "../../tests/support/oidc-provider";
import { OIDC } from "./people";

const appOrigin = process.env.BATON_E2E_APP_ORIGIN ?? "http://127.0.0.1:3100";

const op = await startOidcProvider({
  port: OIDC.port,
  clientId: OIDC.clientId,
  clientSecret: OIDC.clientSecret,
  redirectUris: [`${appOrigin}/auth/oidc/callback`],
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
