// Remove data left by earlier e2e runs. The current run's directory (named by
// BATON_E2E_RUN in playwright.config.ts) belongs to the server that is already
// running, so it is kept; screenshots are collected fresh in e2e-artifacts/.
import fs from "node:fs";
import path from "node:path";

export default function globalSetup(): void {
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
}
