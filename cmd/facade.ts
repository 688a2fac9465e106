import http from "node:http";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { loadConfig } from "../server/config.js";
import { createLogger } from "../server/logger.js";
import { accessLog } from "../server/observability/access-log.js";
import { allServices } from "../wire/services.js";
import { createFacade } from "../facade/facade.js";

/**
 * `npm run start:facade`: the REST facade alone, calling a core in another process over gRPC
 * (GATEWAY_CORE_URL, e.g. http://127.0.0.1:50051 of `npm run start:core`).
 */
const config = loadConfig();
const log = createLogger(config.logLevel);
const coreUrl = process.env.GATEWAY_CORE_URL;
if (!coreUrl) {
  log.fatal("GATEWAY_CORE_URL is required, e.g. http://127.0.0.1:50051");
  process.exit(1);
}

const facade = createFacade({
  services: allServices,
  transport: createGrpcTransport({ baseUrl: coreUrl }),
  log,
  sseKeepaliveMs: config.sseKeepaliveMs,
  // The core behind logs the gRPC calls this facade makes; this line is the REST request's.
  observe: accessLog(log),
});
const server = http.createServer((req, res) => facade.handle(req, res));
server.listen(config.port, config.host, () => log.info({ port: config.port, core: coreUrl }, "facade listening"));

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    facade.close();
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  });
}
