// Sign-in change notifications for the account service: login events from
// the login store (sign-out, password change, expiry) plus users-file
// changes, found by polling the file while anyone listens. Used by
// Accounts.onSignInChange.
import type { AccountsLogger, SignInChange } from "./accounts-types";
import type { UserDirectory } from "./directory";
import type { LoginEvent, LoginStore } from "./logins";

export class SignInChanges {
  private readonly listeners = new Set<(change: SignInChange) => void>();
  private usersPoll: ReturnType<typeof setInterval> | null = null;
  private polling = false;

  constructor(
    private readonly directory: UserDirectory,
    private readonly logins: LoginStore,
    private readonly usersPollMs: number,
    private readonly log: AccountsLogger,
  ) {}

  /** Add a listener; returns the function that removes it. The poll runs while at least one listens. */
  listen(listener: (change: SignInChange) => void): () => void {
    const wrapped = (event: LoginEvent) => listener({ kind: "login", key: event.key, ended: event.kind === "ended" });
    const off = this.logins.onLoginEvent(wrapped);
    this.listeners.add(listener);
    if (this.usersPoll === null) {
      this.usersPoll = setInterval(() => void this.pollUsersFile(), this.usersPollMs);
      this.usersPoll.unref();
    }
    return () => {
      off();
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.usersPoll !== null) {
        clearInterval(this.usersPoll);
        this.usersPoll = null;
      }
    };
  }

  private async pollUsersFile(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      if (!(await this.directory.reloadIfChanged())) return;
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, "users file unavailable");
    } finally {
      this.polling = false;
    }
    for (const l of [...this.listeners]) {
      try {
        l({ kind: "users" });
      } catch {
        // a listener's failure is its own business
      }
    }
  }
}
