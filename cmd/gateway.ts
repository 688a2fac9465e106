/**
 * `npm start`: the gateway; with GATEWAY_WORKERS above 1, a primary process and that many
 * gateway workers sharing the ports (server/app/cluster-primary.ts). `--core-only`: the
 * gRPC/Connect core without the REST facade.
 *
 * @module
 */
import cluster from "node:cluster";
import { startGateway, type GatewayOptions } from "../server/app/app.js";
import { runClusterPrimary } from "../server/app/cluster-primary.js";
import { announceListening, workerLogger } from "../server/app/cluster-worker.js";
import { loadConfig } from "../server/platform/config.js";
import { chooseLogFormat, createLogger } from "../server/platform/logger.js";
import { errorMessage } from "../wire/errors.js";

const config = loadConfig();
// tsx turns on source-mapped stack traces, and mapping is paid on every error object a request
// creates (each aborted signal makes a DOMException): a third of the CPU of a short call. No
// stack reaches a body or a log line, so serving runs without; `--enable-source-maps` keeps them.
if (!process.execArgv.includes("--enable-source-maps")) process.setSourceMapsEnabled(false);
const format = chooseLogFormat(config.logFormat, process.stdout.isTTY === true);
const log = cluster.isWorker
  ? workerLogger(createLogger(config.logLevel, undefined, format))
  : createLogger(config.logLevel, undefined, format);
const coreOnly = process.argv.includes("--core-only");

try {
  if (cluster.isWorker) await serve({ coreOnly, preparedByPrimary: true });
  else if (config.workers > 1) await runClusterPrimary(config, log);
  else await serve({ coreOnly });
} catch (err) {
  log.fatal({ err: errorMessage(err) }, "gateway failed to start");
  process.exit(1);
}

/** One gateway in this process, until SIGTERM or SIGINT drains it. */
async function serve(options: GatewayOptions): Promise<void> {
  const gateway = await startGateway(config, log, options);
  if (cluster.isWorker) announceListening();
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
}
