// `npm run runtime`: the embedded MACP runtime on its own.
import { isLoopback, parseBindAddr } from "./config";
import { startRuntime } from "./index";

const env = { ...process.env };
// A loopback-only runtime with no auth configured defaults to dev mode, so a
// fresh clone works; anything reachable from outside must opt in explicitly.
if (!env.MACP_AUTH_TOKENS_JSON && !env.MACP_AUTH_TOKENS_FILE && !env.MACP_TLS_CERT_PATH && env.MACP_ALLOW_INSECURE === undefined) {
  if (isLoopback(parseBindAddr(env.MACP_BIND_ADDR ?? "127.0.0.1:50051").host)) env.MACP_ALLOW_INSECURE = "1";
}

startRuntime({ env })
  .then((rt) => {
    const stop = (sig: string) => {
      process.stderr.write(`received ${sig}, stopping\n`);
      rt.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
  })
  .catch((e: unknown) => {
    process.stderr.write(`baton runtime failed to start: ${(e as Error).message}\n`);
    process.exit(1);
  });
