import { startGateway } from "../server/gateway/app.js";
import { loadConfig } from "../server/config.js";
import { createLogger } from "../server/logger.js";

/** `npm start`: the gateway. `--core-only`: the gRPC/Connect core without the REST facade. */
const config = loadConfig();
// tsx turns on source-mapped stack traces, and mapping is paid on every error object a request
// creates (each aborted signal makes a DOMException): a third of the CPU of a short call. No
// stack reaches a body or a log line, so serving runs without; `--enable-source-maps` keeps them.
if (!process.execArgv.includes("--enable-source-maps")) process.setSourceMapsEnabled(false);
const log = createLogger(config.logLevel);

try {
  const gateway = await startGateway(config, log, { coreOnly: process.argv.includes("--core-only") });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    gateway.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err: String(err) }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
} catch (err) {
  log.fatal({ err: err instanceof Error ? err.message : String(err) }, "gateway failed to start");
  process.exit(1);
}
