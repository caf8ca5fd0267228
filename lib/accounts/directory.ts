// A cached, self-refreshing view of the users file. Every lookup checks the
// file's identity (inode, size, mtime) so edits made by `npm run users` or by
// hand take effect on the next request: a disabled user is out at once, a
// role change applies to their current session.
//
// If the file becomes invalid the directory fails closed: lookups throw the
// UsersFileError (naming the file and field) instead of serving a stale copy
// that could keep a just-disabled account alive.
import { stat } from "node:fs/promises";
import { readUsersFile, updateUsersFile, type UserRecord, type UsersFile } from "./users-file";

interface Snapshot {
  key: string;
  users: readonly UserRecord[];
}

export class UserDirectory {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;

  constructor(readonly file: string) {}

  private async fileKey(): Promise<string> {
    try {
      const st = await stat(this.file, { bigint: true });
      return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return "missing";
      throw e;
    }
  }

  /** All users, reloaded when the file changed. */
  async users(): Promise<readonly UserRecord[]> {
    const key = await this.fileKey();
    if (this.snapshot?.key === key) return this.snapshot.users;
    if (!this.loading) {
      this.loading = (async () => {
        try {
          const data = key === "missing" ? null : await readUsersFile(this.file);
          const snap: Snapshot = { key, users: Object.freeze(data?.users ?? []) };
          this.snapshot = snap;
          return snap;
        } catch (e) {
          this.snapshot = undefined;
          throw e;
        } finally {
          this.loading = undefined;
        }
      })();
    }
    return (await this.loading).users;
  }

  /**
   * Whether the file changed since the last lookup (reloading it when it
   * did). For watchers that poll; false while the file is unchanged.
   */
  async reloadIfChanged(): Promise<boolean> {
    const before = this.snapshot?.key;
    const key = await this.fileKey();
    if (before === key) return false;
    try {
      await this.users();
    } catch {
      // An invalid file fails closed: lookups throw, so re-checks end sign-ins.
    }
    return true;
  }

  async find(username: string): Promise<UserRecord | undefined> {
    return (await this.users()).find((u) => u.username === username);
  }

  async findByParticipantId(participantId: string): Promise<UserRecord | undefined> {
    return (await this.users()).find((u) => u.participantId === participantId);
  }

  async findByOidcSubject(subject: string): Promise<UserRecord | undefined> {
    return (await this.users()).find((u) => u.oidcSubject === subject);
  }

  async findByEmail(email: string): Promise<UserRecord | undefined> {
    const e = email.toLowerCase();
    return (await this.users()).find((u) => u.email?.toLowerCase() === e);
  }

  /** Read-modify-write the file under its lock; the next lookup sees the change. */
  async update<T>(fn: (data: UsersFile) => T | Promise<T>): Promise<T> {
    const result = await updateUsersFile(this.file, fn);
    this.snapshot = undefined;
    return result;
  }
}
