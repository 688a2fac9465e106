import { findBatch, jsonBody, unixSeconds, type BatchExchange, type BatchRoute } from "./mock-batch-exchange.js";
import type { MockBatch, MockBatchItem, MockFile } from "./mock-batch-store.js";
import { errorBody, sendError, sendJson, type Json } from "./mock-wire.js";

/**
 * The OpenAI Batch API as the mock serves it: `/v1/files` (multipart upload, content, delete) and
 * `/v1/batches`. As on OpenAI, the input file is validated after creation (a bad line fails the
 * batch with `errors`), answered requests go to the output file (2xx) or the error file (other
 * statuses), and requests never run are in the error file with `batch_expired`/`batch_cancelled`.
 */
const V1 = "/openai/v1";
const ID = "([^/]+)";
const ENDPOINT = "/v1/chat/completions";

export const openAiBatchRoutes: BatchRoute[] = [
  { method: "POST", pattern: new RegExp(`^${V1}/files$`), provider: "openai", handle: upload },
  { method: "GET", pattern: new RegExp(`^${V1}/files/${ID}/content$`), provider: "openai", handle: content },
  { method: "DELETE", pattern: new RegExp(`^${V1}/files/${ID}$`), provider: "openai", handle: deleteFile },
  { method: "POST", pattern: new RegExp(`^${V1}/batches$`), provider: "openai", handle: create },
  { method: "GET", pattern: new RegExp(`^${V1}/batches/${ID}$`), provider: "openai", handle: retrieve },
  { method: "POST", pattern: new RegExp(`^${V1}/batches/${ID}/cancel$`), provider: "openai", handle: cancel },
];

function upload(x: BatchExchange): void {
  const parts = multipartFields(x.req.headers["content-type"] ?? "", x.raw);
  const file = parts?.get("file");
  if (!parts || !file)
    return sendError(x.res, "openai", 400, "mock upstream: expected multipart/form-data with a file");
  if (parts.get("purpose")?.value !== "batch")
    return sendError(x.res, "openai", 400, "mock upstream: purpose must be batch");
  const stored = storeFile(x, "batch", file.filename ?? "upload.jsonl", file.value);
  sendJson(x.res, 200, fileJson(stored));
}

function content(x: BatchExchange): void {
  const file = x.store.fileStore.get(x.params[0] ?? "");
  if (!file) return sendError(x.res, "openai", 404, `mock upstream: no file ${x.params[0] ?? ""}`);
  x.res.writeHead(200, { "content-type": "application/octet-stream" });
  x.res.end(file.content);
}

function deleteFile(x: BatchExchange): void {
  const file = x.store.fileStore.get(x.params[0] ?? "");
  if (!file) return sendError(x.res, "openai", 404, `mock upstream: no file ${x.params[0] ?? ""}`);
  const fault = x.store.takeDeleteError();
  if (fault !== undefined) return sendError(x.res, "openai", fault, `mock upstream failure ${fault}`);
  x.store.fileStore.delete(file.id);
  const batch = file.batchId === undefined ? undefined : x.store.batches.get(file.batchId);
  if (batch && Object.values(batch.files).every((id) => id === undefined || !x.store.fileStore.has(id)))
    x.store.markDeleted(batch);
  sendJson(x.res, 200, { id: file.id, object: "file", deleted: true });
}

function create(x: BatchExchange): void {
  const body = jsonBody(x, "openai");
  if (!body) return;
  const input = typeof body.input_file_id === "string" ? x.store.fileStore.get(body.input_file_id) : undefined;
  if (input?.purpose !== "batch")
    return sendError(x.res, "openai", 400, "mock upstream: input_file_id is not a batch file");
  if (body.endpoint !== ENDPOINT)
    return sendError(x.res, "openai", 400, `mock upstream: only ${ENDPOINT} is supported`);
  if (body.completion_window !== "24h")
    return sendError(x.res, "openai", 400, "mock upstream: completion_window must be 24h");
  const fault = x.store.takeSubmitError();
  if (fault) {
    const headers = fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) };
    return sendError(x.res, "openai", fault.status, `mock upstream failure ${fault.status}`, headers);
  }
  const { items, errors } = parseInput(input.content);
  const batch = x.store.create("openai", x.store.nextId("batch_mock_"), items, errors);
  batch.files.input = input.id;
  input.batchId = batch.id;
  sendJson(x.res, 200, batchJson(batch));
}

function parseInput(text: string): { items: MockBatchItem[]; errors: string[] } {
  const items: MockBatchItem[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const l = typeof parsed === "object" && parsed !== null ? (parsed as Json) : {};
    const body = typeof l.body === "object" && l.body !== null ? (l.body as Json) : undefined;
    if (
      typeof l.custom_id !== "string" ||
      seen.has(l.custom_id) ||
      l.method !== "POST" ||
      l.url !== ENDPOINT ||
      !body ||
      typeof body.model !== "string"
    ) {
      errors.push(
        `line ${index + 1}: not a valid request (unique custom_id, method POST, url ${ENDPOINT}, body with model)`,
      );
      return;
    }
    seen.add(l.custom_id);
    items.push({ customId: l.custom_id, body });
  });
  if (items.length === 0 && errors.length === 0) errors.push("the input file is empty");
  return { items, errors };
}

function retrieve(x: BatchExchange): void {
  const batch = findBatch(x, "openai");
  if (!batch) return;
  x.store.poll(batch);
  sendJson(x.res, 200, batchJson(batch, x));
}

function cancel(x: BatchExchange): void {
  const batch = findBatch(x, "openai");
  if (!batch) return;
  x.store.cancel(batch);
  sendJson(x.res, 200, batchJson(batch));
}

const STATUS: Record<NonNullable<MockBatch["endedAs"]>, string> = {
  completed: "completed",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
};

/** With `x`, writes the result files of a batch that has just ended. */
function batchJson(batch: MockBatch, x?: BatchExchange): Json {
  if (
    x &&
    batch.phase === "ended" &&
    batch.endedAs !== "failed" &&
    batch.files.output === undefined &&
    batch.files.error === undefined
  )
    writeResults(x, batch);
  const status =
    batch.phase === "ended"
      ? STATUS[batch.endedAs ?? "completed"]
      : batch.phase === "canceling"
        ? "cancelling"
        : batch.polls === 0
          ? "validating"
          : "in_progress";
  const failures =
    batch.endedAs === "failed"
      ? batch.validationErrors.length > 0
        ? batch.validationErrors
        : ["mock upstream: the batch failed"]
      : [];
  return {
    id: batch.id,
    object: "batch",
    endpoint: ENDPOINT,
    errors:
      failures.length > 0
        ? {
            object: "list",
            data: failures.map((message) => ({ code: "invalid_request", message, param: null, line: null })),
          }
        : null,
    input_file_id: batch.files.input ?? null,
    completion_window: "24h",
    status,
    output_file_id: batch.files.output ?? null,
    error_file_id: batch.files.error ?? null,
    created_at: unixSeconds(batch.createdAt),
    cancelling_at: unixSeconds(batch.cancelledAt),
    completed_at: batch.endedAs === "completed" ? unixSeconds(batch.endedAt) : null,
    request_counts: {
      total: batch.items.length,
      completed: batch.items.filter((item) => item.outcome?.kind === "succeeded").length,
      failed: batch.items.filter((item) => item.outcome?.kind === "errored").length,
    },
    metadata: null,
  };
}

function writeResults(x: BatchExchange, batch: MockBatch): void {
  const output: string[] = [];
  const errors: string[] = [];
  batch.items.forEach((item, index) => {
    const line = (response: Json | null, error: Json | null) =>
      JSON.stringify({ id: `batch_req_mock_${index + 1}`, custom_id: item.customId, response, error });
    const requestId = `req_mock_${index + 1}`;
    const outcome = item.outcome;
    if (outcome?.kind === "succeeded")
      output.push(line({ status_code: 200, request_id: requestId, body: outcome.answer }, null));
    else if (outcome?.kind === "errored")
      errors.push(
        line(
          {
            status_code: outcome.status,
            request_id: requestId,
            body: errorBody("openai", outcome.status, outcome.message),
          },
          null,
        ),
      );
    else if (outcome?.kind === "expired")
      errors.push(
        line(null, {
          code: "batch_expired",
          message: "This request could not be executed before the completion window expired.",
        }),
      );
    else
      errors.push(
        line(null, {
          code: "batch_cancelled",
          message: "This request was not executed because the batch was cancelled.",
        }),
      );
  });
  if (output.length > 0)
    batch.files.output = storeFile(
      x,
      "batch_output",
      `${batch.id}_output.jsonl`,
      `${output.join("\n")}\n`,
      batch.id,
    ).id;
  if (errors.length > 0)
    batch.files.error = storeFile(x, "batch_output", `${batch.id}_error.jsonl`, `${errors.join("\n")}\n`, batch.id).id;
}

function storeFile(x: BatchExchange, purpose: string, filename: string, text: string, batchId?: string): MockFile {
  const file: MockFile = { id: x.store.nextId("file-mock-"), purpose, filename, content: text, createdAt: new Date() };
  if (batchId !== undefined) file.batchId = batchId;
  x.store.fileStore.set(file.id, file);
  return file;
}

function fileJson(file: MockFile): Json {
  return {
    id: file.id,
    object: "file",
    bytes: Buffer.byteLength(file.content),
    created_at: unixSeconds(file.createdAt),
    filename: file.filename,
    purpose: file.purpose,
  };
}

/** Just enough multipart/form-data for the upload: field name → value (and filename). */
function multipartFields(
  contentType: string,
  raw: Buffer,
): Map<string, { value: string; filename?: string }> | undefined {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!contentType.startsWith("multipart/form-data") || !boundary) return undefined;
  const fields = new Map<string, { value: string; filename?: string }>();
  for (const part of raw.toString("utf8").split(`--${boundary}`).slice(1)) {
    if (part.startsWith("--")) break;
    const split = part.indexOf("\r\n\r\n");
    if (split === -1) return undefined;
    const headers = part.slice(0, split);
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (name === undefined) return undefined;
    const value = part.slice(split + 4).replace(/\r\n$/, "");
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    fields.set(name, filename === undefined ? { value } : { value, filename });
  }
  return fields;
}
