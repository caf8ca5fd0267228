// The console's people on its embedded dev-mode runtime. In dev mode the
// runtime believes whatever id a dev header names, so without this any
// process on the machine could send as `human:alice`. Instead:
//
// - the participant ids of the console's people are reserved: every
//   `participantId` in the users file (re-read within a second of any change)
//   and every `oidc:` id (people signed in with OIDC and no users-file
//   entry). The runtime refuses dev headers naming them;
// - the console acts for a person with a delegate credential,
//   `baton-person.<id, base64url>.<HMAC-SHA256 under a per-boot secret>`:
//   the secret is made when the console starts, lives only in this process's
//   memory (the runtime runs in the same process) and dies with it;
// - agents keep the dev headers the official SDKs send.
//
// With static tokens or an external runtime none of this applies: people act
// with their own `runtimeToken` from the users file.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Accounts } from "@/lib/accounts/accounts";
import type { GatewayLogger } from "@/lib/gateway/logger";
import type { ReservedIdentities } from "@/lib/runtime/auth";

const PREFIX = "baton-person.";
/** Participant ids of OIDC sign-ins without a users-file entry (lib/oidc/map-user.ts). */
const OIDC_PREFIX = "oidc:";
const MAX_ID_CHARS = 512;

export class ConsolePeople implements ReservedIdentities {
  private readonly secret = randomBytes(32);
  private ids: ReadonlySet<string> = new Set();
  private stopWatching: (() => void) | null = null;
  private readonly refusedAt = new Map<string, number>();

  constructor(
    private readonly accounts: Accounts,
    private readonly logger: GatewayLogger,
  ) {}

  /** Read the users file now and follow its changes until close(). */
  async start(): Promise<void> {
    await this.reload();
    this.stopWatching ??= this.accounts.onSignInChange((change) => {
      if (change.kind === "users") void this.reload();
    });
  }

  private async reload(): Promise<void> {
    try {
      const users = await this.accounts.directory.users();
      // Added people are reserved at once; removed ones stay reserved until
      // the console restarts (their sessions may still be in flight).
      this.ids = new Set([...this.ids, ...users.map((u) => u.participantId)]);
    } catch (e) {
      // An invalid file keeps the people reserved so far (nobody can sign in meanwhile).
      this.logger.warn({ err: (e as Error).message }, "users file unreadable: keeping the people reserved so far");
    }
  }

  close(): void {
    this.stopWatching?.();
    this.stopWatching = null;
  }

  /** How many people are reserved (users-file entries; `oidc:` ids come on top). */
  get size(): number {
    return this.ids.size;
  }

  isReserved(sender: string): boolean {
    return this.ids.has(sender) || sender.startsWith(OIDC_PREFIX);
  }

  private mac(id: string): Buffer {
    return createHmac("sha256", this.secret).update("baton person\u0000").update(id).digest();
  }

  /** The credential the console sends to act as `participantId`. Never leaves the server. */
  credentialFor(participantId: string): string {
    return `${PREFIX}${Buffer.from(participantId, "utf8").toString("base64url")}.${this.mac(participantId).toString("base64url")}`;
  }

  delegated(credential: string): string | null {
    if (!credential.startsWith(PREFIX)) return null;
    const rest = credential.slice(PREFIX.length);
    const dot = rest.indexOf(".");
    if (dot <= 0) return null;
    const idPart = rest.slice(0, dot);
    const sigPart = rest.slice(dot + 1);
    if (!/^[A-Za-z0-9_-]+$/.test(idPart) || !/^[A-Za-z0-9_-]{43}$/.test(sigPart)) return null;
    const id = Buffer.from(idPart, "base64url").toString("utf8");
    if (id === "" || id.length > MAX_ID_CHARS) return null;
    const given = Buffer.from(sigPart, "base64url");
    const expected = this.mac(id);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return id;
  }

  onRefused(sender: string): void {
    // One line per identity per minute, however often a process retries.
    const now = Date.now();
    const last = this.refusedAt.get(sender);
    if (last !== undefined && now - last < 60_000) return;
    if (this.refusedAt.size >= 1_000) this.refusedAt.clear();
    this.refusedAt.set(sender, now);
    this.logger.warn({ sender }, "refused a dev credential naming a person of the console: only the console acts for its people");
  }

  describe(): string {
    return `the console's people (${this.ids.size} in the users file, and oidc:*) act only through the console`;
  }
}
