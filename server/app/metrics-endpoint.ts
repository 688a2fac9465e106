import cluster from "node:cluster";
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendError } from "../../facade/error-response.js";
import { bearerTokenOf } from "../../wire/bearer-token.js";
import { gatewayError, httpErrorOf, errorMessage } from "../../wire/errors.js";
import type { Logger } from "../platform/logger.js";
import { aggregateExposition, type Exposition, type GatewayMetrics, type MetricsSnapshot } from "./metrics.js";

/**
 * `GET /metrics` on the HTTP port (a port endpoint: no API key). With GATEWAY_METRICS_TOKEN set,
 * the scraper sends `Authorization: Bearer <token>`; anything else is a 401 in the API's error
 * envelope. The token is compared as SHA-256 digests with timingSafeEqual: equal lengths always,
 * so neither its length nor a matching prefix shows in the time taken. In a cluster worker the
 * answer covers every worker (`clusterScrape`).
 */
export function metricsEndpoint(
  metrics: GatewayMetrics,
  token: string | undefined,
  log: Logger,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const expected = token === undefined ? undefined : digest(token);
  const scrape = cluster.isWorker ? clusterScrape(metrics) : () => metrics.scrape();
  return async (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendError(
        res,
        httpErrorOf(gatewayError(405, `Method ${req.method} is not allowed on /metrics; allowed: GET, HEAD`)),
        { allow: "GET, HEAD" },
      );
      return;
    }
    if (expected && !timingSafeEqual(digest(bearerTokenOf(req.headers.authorization) ?? ""), expected)) {
      sendError(
        res,
        httpErrorOf(gatewayError(401, "GET /metrics needs 'Authorization: Bearer <GATEWAY_METRICS_TOKEN>'")),
        { "www-authenticate": 'Bearer realm="metrics"' },
      );
      return;
    }
    try {
      const { body, contentType } = await scrape();
      res.writeHead(200, {
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
        "cache-control": "no-store",
      });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (err) {
      log.error({ err: errorMessage(err) }, "metrics could not be collected");
      sendError(res, httpErrorOf(gatewayError(500, "The metrics could not be collected")));
    }
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/**
 * A cluster's scrape (GATEWAY_WORKERS above 1), between a worker and its primary
 * (server/app/cluster-metrics.ts): the worker a scrape reaches asks (`gather`), the primary
 * asks every serving worker for its values (`snapshot`), each answers (`snapshotted`), and the
 * primary hands them all to the asking worker (`gathered`), which adds them up.
 */
export type ScrapeMessage =
  | { type: "gateway:metrics:gather"; id: number }
  | { type: "gateway:metrics:snapshot"; id: number }
  | { type: "gateway:metrics:snapshotted"; id: number; snapshot?: MetricsSnapshot; error?: string }
  | { type: "gateway:metrics:gathered"; id: number; snapshots?: MetricsSnapshot[]; error?: string };

const SCRAPE_MESSAGES = new Set<unknown>([
  "gateway:metrics:gather",
  "gateway:metrics:snapshot",
  "gateway:metrics:snapshotted",
  "gateway:metrics:gathered",
]);

export function isScrapeMessage(message: unknown): message is ScrapeMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    SCRAPE_MESSAGES.has((message as { type?: unknown }).type) &&
    typeof (message as { id?: unknown }).id === "number"
  );
}

/**
 * In a cluster worker, GET /metrics answers for every worker, not for the one it reached: a
 * scraper on the shared port reaches a different worker each time, and one worker's counters
 * would jump up and down between scrapes. This worker also answers the primary with its own values.
 */
function clusterScrape(metrics: GatewayMetrics): () => Promise<Exposition> {
  const send = (message: ScrapeMessage, failed: (err: Error) => void) =>
    process.send!(message, undefined, undefined, (err: Error | null) => err && failed(err));
  const waiting = new Map<number, { resolve(snapshots: MetricsSnapshot[]): void; reject(err: Error): void }>();
  let next = 0;
  process.on("message", (message: unknown) => {
    if (!isScrapeMessage(message)) return;
    if (message.type === "gateway:metrics:snapshot") {
      // A closed channel means the primary is gone, and this worker with it.
      const ignore = () => {};
      metrics.snapshot().then(
        (snapshot) => send({ type: "gateway:metrics:snapshotted", id: message.id, snapshot }, ignore),
        (err: unknown) =>
          send(
            { type: "gateway:metrics:snapshotted", id: message.id, error: String(errorMessage(err) ?? err) },
            ignore,
          ),
      );
    } else if (message.type === "gateway:metrics:gathered") {
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.snapshots) pending?.resolve(message.snapshots);
      else pending?.reject(new Error(message.error ?? "the primary gathered no metrics"));
    }
  });
  return async () => {
    const id = next++;
    const snapshots = await new Promise<MetricsSnapshot[]>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      send({ type: "gateway:metrics:gather", id }, (err) => {
        waiting.delete(id);
        reject(err);
      });
    });
    return aggregateExposition(snapshots);
  };
}
