import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendError } from "../../facade/error-response.js";
import { bearerTokenOf } from "../../wire/bearer-token.js";
import { gatewayError, httpErrorOf } from "../../wire/errors.js";
import type { Logger } from "../logger.js";
import type { GatewayMetrics } from "./metrics.js";

/**
 * `GET /metrics` on the HTTP port (an edge endpoint: no API key). With GATEWAY_METRICS_TOKEN set,
 * the scraper sends `Authorization: Bearer <token>`; anything else is a 401 in the API's error
 * envelope. The token is compared as SHA-256 digests with timingSafeEqual: equal lengths always,
 * so neither its length nor a matching prefix shows in the time taken.
 */
export function metricsEndpoint(metrics: GatewayMetrics, token: string | undefined, log: Logger): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const expected = token === undefined ? undefined : digest(token);
  return async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendError(res, httpErrorOf(gatewayError(405, `Method ${req.method} is not allowed on /metrics; allowed: GET, HEAD`)), { allow: "GET, HEAD" });
      return;
    }
    if (expected && !timingSafeEqual(digest(bearerTokenOf(req.headers.authorization) ?? ""), expected)) {
      sendError(res, httpErrorOf(gatewayError(401, "GET /metrics needs 'Authorization: Bearer <GATEWAY_METRICS_TOKEN>'")), { "www-authenticate": 'Bearer realm="metrics"' });
      return;
    }
    try {
      const { body, contentType } = await metrics.scrape();
      res.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (err) {
      log.error({ err: (err as Error).message }, "metrics could not be collected");
      sendError(res, httpErrorOf(gatewayError(500, "The metrics could not be collected")));
    }
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
