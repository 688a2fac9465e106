import http from "node:http";
import type { AddressInfo } from "node:net";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createFacade } from "../../facade/facade.js";
import { createLogger } from "../../server/platform/logger.js";
import { allServices } from "../../wire/services.js";

/** The REST facade in this process, calling a core (a `--core-only` child) over gRPC only. */
export interface RemoteFacade {
  url: string;
  close(): Promise<void>;
}

export async function startRemoteFacade(coreGrpcPort: number): Promise<RemoteFacade> {
  const facade = createFacade({
    services: allServices,
    transport: createGrpcTransport({ baseUrl: `http://127.0.0.1:${coreGrpcPort}` }),
    log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent"),
    sseKeepaliveMs: 30_000,
  });
  const server = http.createServer((req, res) => facade.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      facade.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
