// Remove data left by earlier e2e runs (the current run's directory, named by
// BATON_E2E_RUN in playwright.config.ts, belongs to the servers that are already
// running), collect screenshots fresh in e2e-artifacts/, and sign every e2e
// person in once on each of the run's apps, saving their browser state for the
// tests (people.ts: one file per person and app).
import fs from "node:fs";
import path from "node:path";
import { request } from "@playwright/test";
import { APP_NAMES, E2E_DATA_ROOT, e2eApp, e2eRunId, type AppName } from "./support/apps";
import { AUTH_DIR, E2E_PASSWORD, PEOPLE, SIGNED_IN, authFile } from "./support/people";

async function signInEveryone(app: AppName): Promise<void> {
  const baseURL = e2eApp(app).origin;
  fs.mkdirSync(path.dirname(authFile(SIGNED_IN[0] ?? "wendy", app)), { recursive: true });
  for (const key of SIGNED_IN) {
    const ctx = await request.newContext({ baseURL });
    try {
      const res = await ctx.post("/auth/login", { data: { username: PEOPLE[key].username, password: E2E_PASSWORD } });
      if (!res.ok()) throw new Error(`e2e sign-in as ${key} on app ${app} failed: ${res.status()} ${await res.text()}`);
      await ctx.storageState({ path: authFile(key, app) });
    } finally {
      await ctx.dispose();
    }
  }
}

export default async function globalSetup(): Promise<void> {
  const root = path.join(process.cwd(), E2E_DATA_ROOT);
  const current = e2eRunId();
  if (fs.existsSync(root)) {
    for (const entry of fs.readdirSync(root)) {
      if (entry !== current) fs.rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }
  const artifacts = path.join(process.cwd(), "e2e-artifacts");
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });

  fs.rmSync(AUTH_DIR, { recursive: true, force: true });
  await Promise.all(APP_NAMES.map((app) => signInEveryone(app)));
}
