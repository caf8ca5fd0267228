// A real OpenID Connect provider (oidc-provider v9) on a loopback port, for
// tests: one confidential client, test accounts with passwords, a plain HTML
// sign-in form (usable by Playwright), automatic consent, and `signIn()` that
// drives the whole browser part of the code flow with fetch and a cookie jar.
//
//   const op = await startOidcProvider({ redirectUris: ["http://127.0.0.1:3000/auth/oidc/callback"],
//                                         accounts: [{ sub: "u-1", username: "alice", password: "pw", claims: { email: "a@x" } }] });
//   const callbackUrl = await op.signIn(authorizationUrl, { username: "alice", password: "pw" });
//   await op.close();
import { generateKeyPairSync, randomBytes } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Provider, type Account, type InteractionDetails } from "oidc-provider";

export interface TestAccount {
  /** The `sub` claim. */
  sub: string;
  /** What to type in the provider's sign-in form. */
  username: string;
  password: string;
  /** Extra claims: email, email_verified, name, preferred_username, groups, … */
  claims?: Record<string, unknown>;
}

export interface OidcProviderOptions {
  redirectUris: string[];
  accounts: TestAccount[];
  clientId?: string;
  clientSecret?: string;
  /**
   * Put scope claims in the ID token too (oidc-provider's conformIdTokenClaims=false).
   * Default false: like many providers, profile/email claims come from userinfo.
   */
  claimsInIdToken?: boolean;
  /** Loopback port to listen on; default 0 (a free port). The e2e suite needs a fixed one. */
  port?: number;
}

export interface TestOidcProvider {
  /** Issuer identifier, e.g. http://127.0.0.1:43123 */
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: TestAccount[];
  /**
   * Follow an authorization URL like a browser: sign in with the form, consent
   * automatically, and return the URL the provider redirects back to (not fetched).
   */
  signIn(authorizationUrl: string, credentials: { username: string; password: string } | { abort: true }): Promise<string>;
  close(): Promise<void>;
}

const SCOPE_CLAIMS = {
  openid: ["sub"],
  email: ["email", "email_verified"],
  profile: ["name", "preferred_username"],
  groups: ["groups"],
};

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

function loginPage(uid: string, error?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test identity provider: sign in</title></head>
<body>
<h1>Test identity provider</h1>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
  <label>Username <input name="username" autocomplete="username" required></label>
  <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>
<p><a href="/interaction/${escapeHtml(uid)}/abort">Cancel</a></p>
</body></html>`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > 16_384) throw new Error("form too large");
    chunks.push(buf);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export async function startOidcProvider(options: OidcProviderOptions): Promise<TestOidcProvider> {
  const clientId = options.clientId ?? "baton-test";
  const clientSecret = options.clientSecret ?? randomBytes(24).toString("base64url");
  const accounts = options.accounts;

  let provider: Provider | undefined;
  let providerHandler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined): Promise<void> {
    const p = provider as Provider;
    const details: InteractionDetails = await p.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error("interaction mismatch");
    if (action === "abort") {
      await p.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "End-User aborted interaction" },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (details.prompt.name === "login") {
      if (req.method === "POST" && action === "login") {
        const form = await readForm(req);
        const account = accounts.find((a) => a.username === form.get("username") && a.password === form.get("password"));
        if (!account) {
          res.writeHead(401, { "content-type": "text/html; charset=utf-8" });
          res.end(loginPage(uid, "Wrong username or password."));
          return;
        }
        await p.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
        return;
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(loginPage(uid));
      return;
    }
    if (details.prompt.name === "consent") {
      // Automatic consent: grant exactly what the client asked for.
      const d = details.prompt.details;
      const accountId = details.session?.accountId;
      const clientIdParam = details.params.client_id;
      if (typeof accountId !== "string" || typeof clientIdParam !== "string") throw new Error("consent without a session");
      const grant =
        details.grantId !== undefined ? await p.Grant.find(details.grantId) : new p.Grant({ accountId, clientId: clientIdParam });
      if (!grant) throw new Error("grant not found");
      if (Array.isArray(d.missingOIDCScope)) grant.addOIDCScope((d.missingOIDCScope as string[]).join(" "));
      if (Array.isArray(d.missingOIDCClaims)) grant.addOIDCClaims(d.missingOIDCClaims as string[]);
      if (d.missingResourceScopes && typeof d.missingResourceScopes === "object") {
        for (const [indicator, scopes] of Object.entries(d.missingResourceScopes as Record<string, string[]>)) {
          grant.addResourceScope(indicator, scopes.join(" "));
        }
      }
      const grantId = await grant.save();
      await p.interactionFinished(
        req,
        res,
        { consent: details.grantId !== undefined ? {} : { grantId } },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    res.writeHead(501, { "content-type": "text/plain" });
    res.end(`prompt ${details.prompt.name} is not supported by the test provider`);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const m = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|abort))?$/.exec(url.pathname);
    if (m) {
      interaction(req, res, m[1] as string, m[2]).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(400, { "content-type": "text/plain" });
        res.end(`interaction failed: ${(e as Error).message}`);
      });
      return;
    }
    (providerHandler as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: "test-key", use: "sig", alg: "RS256" };

  provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    async findAccount(_ctx: unknown, sub: string): Promise<Account | undefined> {
      const account = accounts.find((a) => a.sub === sub);
      if (!account) return undefined;
      return { accountId: sub, claims: () => ({ ...account.claims, sub }) };
    },
    claims: SCOPE_CLAIMS,
    scopes: Object.keys(SCOPE_CLAIMS),
    conformIdTokenClaims: options.claimsInIdToken !== true,
    interactions: { url: (_ctx: unknown, i: { uid: string }) => `/interaction/${i.uid}` },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    jwks: { keys: [jwk] },
  });
  providerHandler = provider.callback();

  async function signIn(authorizationUrl: string, credentials: { username: string; password: string } | { abort: true }): Promise<string> {
    const jar = new CookieJar();
    const redirectTargets = options.redirectUris.map((u) => new URL(u));
    let url = new URL(authorizationUrl);
    let init: { method: string; body?: URLSearchParams } = { method: "GET" };
    for (let step = 0; step < 20; step++) {
      const headers: Record<string, string> = {};
      const cookie = jar.header(url);
      if (cookie !== "") headers.cookie = cookie;
      if (init.body) headers["content-type"] = "application/x-www-form-urlencoded";
      const res = await fetch(url, { method: init.method, headers, redirect: "manual", ...(init.body ? { body: init.body } : {}) });
      jar.store(url, res.headers.getSetCookie());
      if (res.status >= 300 && res.status < 400) {
        const location = res.headers.get("location");
        if (location === null) throw new Error(`redirect without Location from ${url.href}`);
        const next = new URL(location, url);
        await res.arrayBuffer();
        if (redirectTargets.some((t) => t.origin === next.origin && t.pathname === next.pathname)) return next.href;
        url = next;
        init = { method: "GET" };
        continue;
      }
      const text = await res.text();
      const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
      if (res.status === 200 && action !== undefined) {
        if ("abort" in credentials) {
          url = new URL(`${url.pathname}/abort`, url);
          init = { method: "GET" };
        } else {
          url = new URL(action, url);
          init = { method: "POST", body: new URLSearchParams({ username: credentials.username, password: credentials.password }) };
        }
        continue;
      }
      throw new Error(`test OIDC sign-in stopped at ${init.method} ${url.href}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    }
    throw new Error("test OIDC sign-in: too many redirects");
  }

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    signIn,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Just enough of a browser cookie jar: path scoping, Max-Age/Expires removal. */
class CookieJar {
  private readonly cookies = new Map<string, { name: string; value: string; path: string; expires?: number }>();

  store(from: URL, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(";");
      const eq = (pair ?? "").indexOf("=");
      if (!pair || eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let path = from.pathname.replace(/\/[^/]*$/, "") || "/";
      let expires: number | undefined;
      for (const attr of attrs) {
        const [k = "", v = ""] = attr.split("=").map((s) => s.trim());
        const key = k.toLowerCase();
        if (key === "path" && v.startsWith("/")) path = v;
        else if (key === "max-age") expires = Date.now() + Number(v) * 1000;
        else if (key === "expires" && expires === undefined) expires = Date.parse(v);
      }
      const id = `${name};${path}`;
      if (expires !== undefined && expires <= Date.now()) this.cookies.delete(id);
      else this.cookies.set(id, { name, value, path, ...(expires !== undefined ? { expires } : {}) });
    }
  }

  header(to: URL): string {
    const now = Date.now();
    return [...this.cookies.values()]
      .filter(
        (c) =>
          (c.expires === undefined || c.expires > now) &&
          (to.pathname === c.path || to.pathname.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`)),
      )
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }
}
