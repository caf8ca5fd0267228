// The runtime clients the bridge acts through, one per identity (the most
// recently used 64 are kept open), and Blocked: why a handoff waits on
// something outside the bridge (no credential for an identity, at capacity).
import { MacpClient, type AuthConfig } from "@/lib/agent";

const MAX_CLIENTS = 64;

/** A handoff cannot go on until something outside the bridge changes; it is looked at again at the next sweep. */
export class Blocked extends Error {}

export interface ClientPoolOptions {
  /** MACP runtime address (host:port or URL). */
  runtime: string;
  tls?: boolean;
  caPath?: string;
  /** The credential to act as `identity`; undefined when there is none. */
  credentials: (identity: string) => AuthConfig | undefined;
}

export class ClientPool {
  private readonly clients = new Map<string, MacpClient>();

  constructor(private readonly o: ClientPoolOptions) {}

  /** The client acting as `identity`; throws Blocked without a credential for it. */
  get(identity: string): MacpClient {
    const existing = this.clients.get(identity);
    if (existing) {
      this.clients.delete(identity);
      this.clients.set(identity, existing);
      return existing;
    }
    const auth = this.o.credentials(identity);
    if (!auth) throw new Blocked(`no credential to act as ${identity}`);
    const c = new MacpClient({
      address: this.o.runtime,
      auth,
      ...(this.o.tls ? { tls: true } : {}),
      ...(this.o.caPath ? { caPath: this.o.caPath } : {}),
      clientName: "baton-files-bridge",
    });
    this.clients.set(identity, c);
    if (this.clients.size > MAX_CLIENTS) {
      const [oldest, oc] = this.clients.entries().next().value as [string, MacpClient];
      this.clients.delete(oldest);
      oc.close();
    }
    return c;
  }

  closeAll(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
