import type http from "node:http";
import type { MockBatch, MockBatchStore } from "./mock-batch-store.js";
import { sendError, type Json, type Provider } from "./mock-wire.js";

/** What the mock's batch routes share: the exchange they get and how they read it. */

/** What a route gets: the request, its whole body, and the path's captured ids. */
export interface BatchExchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  raw: Buffer;
  params: string[];
  store: MockBatchStore;
  /** `http://host:port` as the client reached us, for URLs in answers (results_url). */
  origin: string;
}

export interface BatchRoute {
  method: "GET" | "POST" | "DELETE";
  pattern: RegExp;
  provider: Provider;
  handle(x: BatchExchange): void;
}

export function parseJson(raw: Buffer): Json | undefined {
  try {
    const parsed: unknown = JSON.parse(raw.toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON request body, or the provider's 400 (then undefined). */
export function jsonBody(x: BatchExchange, provider: Provider): Json | undefined {
  const body = parseJson(x.raw);
  if (!body) sendError(x.res, provider, 400, "the request body is not a JSON object");
  return body;
}

/** The batch a path names, or the provider's 404 (then undefined). */
export function findBatch(x: BatchExchange, provider: Provider): MockBatch | undefined {
  const batch = x.store.batches.get(x.params[0] ?? "");
  if (!batch || batch.provider !== provider || (provider === "anthropic" && batch.deleted)) {
    sendError(x.res, provider, 404, `mock upstream: no batch ${x.params[0] ?? ""}`);
    return undefined;
  }
  return batch;
}

export function unixSeconds(date: Date | undefined): number | null {
  return date ? Math.floor(date.getTime() / 1000) : null;
}
