import type http from "node:http";
import { parseJson, type BatchRoute } from "./mock-batch-exchange.js";
import type { MockBatchStore } from "./mock-batch-store.js";
import { anthropicBatchRoutes } from "./mock-batches-anthropic.js";
import { openAiBatchRoutes } from "./mock-batches-openai.js";
import { authorized } from "./mock-wire.js";

export { MockBatchStore, type MockBatches, type MockBatchFaults, type MockReply } from "./mock-batch-store.js";

const ROUTES: BatchRoute[] = [...anthropicBatchRoutes, ...openAiBatchRoutes];

/**
 * Serves a batch route; false when the request is not one (the live routes take it then).
 * `record` keeps the request for assertions like the live routes do.
 */
export function handleBatchRoute(
  store: MockBatchStore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  raw: Buffer,
  record: (body: unknown) => void,
): boolean {
  const path = (req.url ?? "").split("?")[0] ?? "";
  for (const route of ROUTES) {
    const match = route.method === req.method ? route.pattern.exec(path) : null;
    if (!match) continue;
    record(parseJson(raw) ?? (raw.length > 0 ? { bytes: raw.length } : undefined));
    if (!authorized(route.provider, req, res)) return true;
    const params = match.slice(1).map((value) => decodeURIComponent(value ?? ""));
    route.handle({ req, res, raw, params, store, origin: `http://${req.headers.host ?? "127.0.0.1"}` });
    return true;
  }
  return false;
}
