// TLS: with MACP_TLS_CERT_PATH/MACP_TLS_KEY_PATH the runtime serves gRPC over
// HTTPS/2 and plaintext is not required.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { MACPRuntimeService } from "@/lib/gen/macp/v1/core_pb";
import { authInterceptor, startTestRuntime, tempDir } from "./harness";

describe("TLS", () => {
  it("serves gRPC over TLS with the configured certificate", async () => {
    const dir = tempDir("baton-tls-");
    const cert = path.join(dir, "cert.pem");
    const key = path.join(dir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    const rt = await startTestRuntime({
      MACP_ALLOW_INSECURE: "0",
      MACP_TLS_CERT_PATH: cert,
      MACP_TLS_KEY_PATH: key,
      MACP_AUTH_TOKENS_JSON: '[{"token":"t","sender":"alice"}]',
    });
    try {
      expect(rt.url.startsWith("https://")).toBe(true);
      const client = createClient(
        MACPRuntimeService,
        createGrpcTransport({
          baseUrl: rt.url,
          nodeOptions: { ca: fs.readFileSync(cert) },
          interceptors: [authInterceptor("t", "bearer")],
        }),
      );
      const res = await client.initialize({ supportedProtocolVersions: ["1.0"] });
      expect(res.selectedProtocolVersion).toBe("1.0");
      expect((await client.listSessions({})).sessions).toEqual([]);
    } finally {
      await rt.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
