// Remove data left by earlier e2e runs (the current run's directory, named by
// BATON_E2E_RUN in playwright.config.ts, belongs to the server that is already
// running), collect screenshots fresh in e2e-artifacts/, and sign every e2e
// person in once, saving their browser state for the tests (people.ts).
import fs from "node:fs";
import path from "node:path";
import { request, type FullConfig } from "@playwright/test";
import { AUTH_DIR, E2E_PASSWORD, PEOPLE, SIGNED_IN, authFile } from "./support/people";

export default async function globalSetup(config: FullConfig): Promise<void> {
  const root = path.join(process.cwd(), ".baton", "e2e-data");
  const current = process.env.BATON_E2E_RUN ?? "";
  if (fs.existsSync(root)) {
    for (const entry of fs.readdirSync(root)) {
      if (entry !== current) fs.rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }
  const artifacts = path.join(process.cwd(), "e2e-artifacts");
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });

  fs.rmSync(AUTH_DIR, { recursive: true, force: true });
  fs.mkdirSync(AUTH_DIR, { recursive: true });
  const baseURL = config.projects[0]?.use.baseURL ?? "http://127.0.0.1:3100";
  for (const key of SIGNED_IN) {
    const ctx = await request.newContext({ baseURL });
    try {
      const res = await ctx.post("/auth/login", { data: { username: PEOPLE[key].username, password: E2E_PASSWORD } });
      if (!res.ok()) throw new Error(`e2e sign-in as ${key} failed: ${res.status()} ${await res.text()}`);
      await ctx.storageState({ path: authFile(key) });
    } finally {
      await ctx.dispose();
    }
  }
}
