/**
 * `npm run start:facade`: the REST facade alone, calling a core in another process over gRPC
 * (GATEWAY_CORE_URL, e.g. http://127.0.0.1:50051 of `npm run start:core`).
 *
 * @module
 */
import http from "node:http";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { loadConfig } from "../server/platform/config.js";
import { addApiDocsEndpoints } from "../server/app/api-docs-endpoints.js";
import { addConsoleEndpoints } from "../server/app/console-endpoints.js";
import { createCoreReadiness } from "../server/app/core-readiness.js";
import { PortEndpoints } from "../server/app/port-endpoints.js";
import { addHealthEndpoints } from "../server/app/health-endpoints.js";
import { urlOf } from "../server/app/ports.js";
import { chooseLogFormat, createLogger } from "../server/platform/logger.js";
import { accessLog } from "../server/platform/observability/access-log.js";
import { allServices } from "../wire/services.js";
import { createFacade } from "../facade/facade.js";

const config = loadConfig();
const log = createLogger(config.logLevel, undefined, chooseLogFormat(config.logFormat, process.stdout.isTTY === true));
const coreUrl = process.env.GATEWAY_CORE_URL;
if (!coreUrl) {
  log.fatal("GATEWAY_CORE_URL is required, e.g. http://127.0.0.1:50051");
  process.exit(1);
}

const transport = createGrpcTransport({ baseUrl: coreUrl });
const facade = createFacade({
  services: allServices,
  transport,
  log,
  sseKeepaliveMs: config.sseKeepaliveMs,
  // The core behind logs the gRPC calls this facade makes; this line is the REST request's.
  observe: accessLog(log),
});
// The operational paths a facade can answer itself: its probes (from the core's health), the API
// description and the console; metrics stay with the core, which does the work they count.
const readiness = createCoreReadiness(transport);
const portEndpoints = new PortEndpoints();
addApiDocsEndpoints(portEndpoints);
addConsoleEndpoints(portEndpoints);
addHealthEndpoints(portEndpoints, readiness);
const server = http.createServer((req, res) => {
  if (!portEndpoints.handle(req, res, log)) facade.handle(req, res);
});
server.listen(config.port, config.host, () => log.info({ http: urlOf(server), core: coreUrl }, "facade listening"));

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    readiness.startDraining();
    facade.stop();
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  });
}
