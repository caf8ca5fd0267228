// Creates the e2e users file (BATON_USERS_FILE) before the app starts, with
// the users CLI's own logic (as `npm run users -- add` does) at the cheap
// scrypt cost meant for tests. Run by the webServer command in
// playwright.config.ts; an existing file is replaced.
import fs from "node:fs";
import path from "node:path";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { runUsersCli } from "@/lib/accounts/users-cli";
import { updateUsersFile } from "@/lib/accounts/users-file";
import { E2E_PASSWORD, PEOPLE } from "./people";

async function main(): Promise<void> {
  const file = process.env.BATON_USERS_FILE;
  if (!file) throw new Error("BATON_USERS_FILE must name the e2e users file");
  // The run's data folder is the runtime's too, which wants it private.
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.rmSync(file, { force: true });
  for (const p of Object.values(PEOPLE)) {
    const errors: string[] = [];
    const args = ["add", p.username, "--role", p.role, "--name", p.name, "--password-stdin", "--file", file];
    if ("email" in p) args.push("--email", p.email);
    const code = await runUsersCli(
      args,
      { out: () => undefined, err: (t) => errors.push(t), readPassword: async () => E2E_PASSWORD, env: {} },
      { scrypt: TEST_SCRYPT },
    );
    if (code !== 0) throw new Error(`users add ${p.username} failed: ${errors.join("")}`);
  }
  await updateUsersFile(file, (data) => {
    for (const u of data.users)
      if (Object.values(PEOPLE).some((p) => p.username === u.username && "mustChangePassword" in p)) u.mustChangePassword = true;
  });
  process.stdout.write(`e2e users file ready: ${file}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`seed-users: ${(e as Error).message}\n`);
  process.exit(1);
});
