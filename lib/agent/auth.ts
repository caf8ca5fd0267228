// How an agent authenticates to a MACP runtime (PROTOCOL.md §9.1):
// - a bearer token (token mode, or the dev fallback where the bearer value
//   is the identity itself);
// - a dev agent id, sent as `authorization: Bearer <id>` (what the Python SDK
//   and the reference runtime use) or, for runtimes that still honour the
//   legacy TypeScript-SDK header, as `x-macp-agent-id: <id>`.

export type DevHeaderStyle = "bearer" | "x-macp-agent-id";

export type AuthConfig =
  | {
      /** Dev identity: the runtime trusts this name (development only). */
      agentId: string;
      /** Header used to name the agent. Default "bearer". */
      header?: DevHeaderStyle;
    }
  | {
      /** Opaque bearer token issued by the runtime operator. */
      token: string;
      /**
       * The identity the token stands for, when known. Used as the envelope
       * sender; when absent the runtime fills the sender in (§9.4).
       */
      sender?: string;
    };

/** Constructors named after the official SDKs' helpers. */
export const Auth = {
  /** Dev identity sent as `authorization: Bearer <id>`. */
  devAgent(agentId: string, header: DevHeaderStyle = "bearer"): AuthConfig {
    return { agentId, header };
  },
  /** Static or issued bearer token. */
  bearer(token: string, opts: { expectedSender?: string } = {}): AuthConfig {
    return opts.expectedSender === undefined ? { token } : { token, sender: opts.expectedSender };
  },
};

/** Request headers carrying the credential. */
export function authHeaders(auth: AuthConfig): Record<string, string> {
  if ("token" in auth) return { authorization: `Bearer ${auth.token}` };
  if (auth.header === "x-macp-agent-id") return { "x-macp-agent-id": auth.agentId };
  return { authorization: `Bearer ${auth.agentId}` };
}

/** The sender identity this credential stands for, or undefined when only the runtime knows it. */
export function authSender(auth: AuthConfig | undefined): string | undefined {
  if (!auth) return undefined;
  return "token" in auth ? auth.sender : auth.agentId;
}

/** Short description for logs and error messages; never prints a token. */
export function describeAuth(auth: AuthConfig | undefined): string {
  if (!auth) return "anonymous";
  if ("token" in auth) return auth.sender ? `token for ${auth.sender}` : "bearer token";
  return `dev identity ${auth.agentId}`;
}
