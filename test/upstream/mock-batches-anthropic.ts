import { findBatch, jsonBody, type BatchExchange, type BatchRoute } from "./mock-batch-exchange.js";
import type { MockBatch, MockBatchItem } from "./mock-batch-store.js";
import { errorBody, sendError, sendJson, type Json } from "./mock-wire.js";

/** Anthropic Message Batches (`/v1/messages/batches`) as the mock serves them. */
const BASE = "/anthropic/v1/messages/batches";
const ID = "([^/]+)";

export const anthropicBatchRoutes: BatchRoute[] = [
  { method: "POST", pattern: new RegExp(`^${BASE}$`), provider: "anthropic", handle: create },
  { method: "GET", pattern: new RegExp(`^${BASE}/${ID}$`), provider: "anthropic", handle: retrieve },
  { method: "GET", pattern: new RegExp(`^${BASE}/${ID}/results$`), provider: "anthropic", handle: results },
  { method: "POST", pattern: new RegExp(`^${BASE}/${ID}/cancel$`), provider: "anthropic", handle: cancel },
  { method: "DELETE", pattern: new RegExp(`^${BASE}/${ID}$`), provider: "anthropic", handle: remove },
];

function create(x: BatchExchange): void {
  const body = jsonBody(x, "anthropic");
  if (!body) return;
  const items = itemsOf(body.requests);
  if (typeof items === "string") return sendError(x.res, "anthropic", 400, items);
  const fault = x.store.takeSubmitError();
  if (fault) {
    const headers = fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) };
    return sendError(x.res, "anthropic", fault.status, `mock upstream failure ${fault.status}`, headers);
  }
  const batch = x.store.create("anthropic", x.store.nextId("msgbatch_mock_"), items);
  sendJson(x.res, 200, batchJson(batch, x.origin));
}

/** The requests, or why they are refused (Anthropic validates the envelope at creation). */
function itemsOf(requests: unknown): MockBatchItem[] | string {
  if (!Array.isArray(requests) || requests.length === 0) return "requests: must be a non-empty array";
  const items: MockBatchItem[] = [];
  const seen = new Set<string>();
  for (const [index, request] of requests.entries()) {
    const r = typeof request === "object" && request !== null ? (request as Json) : {};
    const params = typeof r.params === "object" && r.params !== null ? (r.params as Json) : undefined;
    if (typeof r.custom_id !== "string" || r.custom_id === "") return `requests.${index}.custom_id: required`;
    if (seen.has(r.custom_id)) return `requests.${index}.custom_id: duplicate ${r.custom_id}`;
    if (!params || typeof params.model !== "string" || !Array.isArray(params.messages))
      return `requests.${index}.params: model and messages are required`;
    if (params.stream === true) return `requests.${index}.params.stream: not supported in batches`;
    seen.add(r.custom_id);
    items.push({ customId: r.custom_id, body: params });
  }
  return items;
}

function retrieve(x: BatchExchange): void {
  const batch = findBatch(x, "anthropic");
  if (!batch) return;
  x.store.poll(batch);
  sendJson(x.res, 200, batchJson(batch, x.origin));
}

function results(x: BatchExchange): void {
  const batch = findBatch(x, "anthropic");
  if (!batch) return;
  if (batch.phase !== "ended") return sendError(x.res, "anthropic", 404, "mock upstream: the batch has not ended");
  const lines = batch.items.map((item) => JSON.stringify({ custom_id: item.customId, result: resultJson(item) }));
  x.res.writeHead(200, { "content-type": "application/binary" });
  x.res.end(lines.map((line) => `${line}\n`).join(""));
}

function resultJson(item: MockBatchItem): Json {
  const outcome = item.outcome;
  switch (outcome?.kind) {
    case "succeeded":
      return { type: "succeeded", message: outcome.answer };
    case "errored":
      return { type: "errored", error: errorBody("anthropic", outcome.status, outcome.message) };
    case "expired":
      return { type: "expired" };
    default:
      return { type: "canceled" };
  }
}

function cancel(x: BatchExchange): void {
  const batch = findBatch(x, "anthropic");
  if (!batch) return;
  x.store.cancel(batch);
  sendJson(x.res, 200, batchJson(batch, x.origin));
}

function remove(x: BatchExchange): void {
  const batch = findBatch(x, "anthropic");
  if (!batch) return;
  const fault = x.store.takeDeleteError();
  if (fault !== undefined) return sendError(x.res, "anthropic", fault, `mock upstream failure ${fault}`);
  if (batch.phase !== "ended")
    return sendError(
      x.res,
      "anthropic",
      400,
      "mock upstream: a batch in progress must be canceled before it is deleted",
    );
  x.store.markDeleted(batch);
  sendJson(x.res, 200, { id: batch.id, type: "message_batch_deleted" });
}

function batchJson(batch: MockBatch, origin: string): Json {
  const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  for (const item of batch.items) counts[item.outcome?.kind ?? "processing"] += 1;
  return {
    id: batch.id,
    type: "message_batch",
    processing_status: batch.phase,
    request_counts: counts,
    ended_at: iso(batch.endedAt),
    created_at: iso(batch.createdAt),
    expires_at: iso(new Date(batch.createdAt.getTime() + 24 * 3600_000)),
    archived_at: null,
    cancel_initiated_at: iso(batch.cancelledAt),
    results_url: batch.phase === "ended" ? `${origin}${BASE}/${batch.id}/results` : null,
  };
}

function iso(date: Date | undefined): string | null {
  return date ? date.toISOString() : null;
}
