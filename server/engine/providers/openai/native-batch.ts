/**
 * The OpenAI Batch API (and compatible providers): the items go up as a JSONL file, the batch
 * refers to it, results come back as an output file (successes and per-request HTTP errors) and
 * an error file. The batch object cannot be deleted; deleting its files is the cleanup.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import { isObject, stringOr } from "../json-shape.js";
import type { NativeBatchApi, NativeBatchResult, NativeBatchState, NativeBatchStatus } from "../native-batch-api.js";
import { joinedBody, NO_TOKENS, parseResultLine, pathSegment, unlessNotFound } from "../native-batch-wire.js";
import { usageFromOpenAi } from "./usage.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { providerErrorMessage, statusForErrorObject } from "../upstream-error-body.js";
import { callUpstream, discardBody, postUpstream, readJsonObject, upstreamLines } from "../upstream-http.js";

const ENDPOINT = "/v1/chat/completions";

export const openAiNativeBatch: NativeBatchApi = {
  async submit(target, requests, signal) {
    const lines = requests.map((item) => {
      // As the live adapter sends it: never streamed, the target's model.
      const { stream: _stream, stream_options: _options, ...rest } = item.body;
      return JSON.stringify({
        custom_id: item.customId,
        method: "POST",
        url: ENDPOINT,
        body: { ...rest, model: target.upstreamModelId },
      });
    });
    const fileId = await uploadBatchFile(target, lines, signal);
    try {
      const response = await postUpstream(
        target,
        "/batches",
        headersFor(target),
        { input_file_id: fileId, endpoint: ENDPOINT, completion_window: "24h" },
        signal,
      );
      const batch = await readJsonObject(response);
      if (typeof batch.id !== "string" || batch.id === "")
        throw new UpstreamError("protocol", "the upstream batch has no id");
      return batch.id;
    } catch (err) {
      // Without a batch nothing refers to the file; leave no orphan holding the prompts.
      await unlessNotFound(() => deleteFile(target, fileId, AbortSignal.timeout(target.timeoutMs))).catch(
        () => undefined,
      );
      throw err;
    }
  },

  async status(target, upstreamId, signal) {
    return stateOf(await getBatch(target, upstreamId, signal), target.apiKey);
  },

  async *results(target, upstreamId, signal) {
    const batch = await getBatch(target, upstreamId, signal);
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId !== "string" || fileId === "") continue;
      const response = await callUpstream(
        target,
        { method: "GET", path: `/files/${pathSegment(fileId)}/content`, headers: headersFor(target) },
        signal,
      );
      for await (const line of upstreamLines(response)) {
        const result = resultOf(parseResultLine(line), target.apiKey);
        if (result) yield result;
      }
    }
  },

  async cancel(target, upstreamId, signal) {
    await discardBody(
      await callUpstream(
        target,
        { method: "POST", path: `/batches/${pathSegment(upstreamId)}/cancel`, headers: headersFor(target) },
        signal,
      ),
    );
  },

  async remove(target, upstreamId, signal) {
    const batch = await unlessNotFound(() => getBatch(target, upstreamId, signal));
    if (!batch) return "deleted";
    for (const fileId of [batch.input_file_id, batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId === "string" && fileId !== "") await unlessNotFound(() => deleteFile(target, fileId, signal));
    }
    return "deleted";
  },
};

function headersFor(target: UpstreamTarget): Record<string, string> {
  return { authorization: `Bearer ${target.apiKey}`, accept: "application/json" };
}

/** `POST /files` as multipart/form-data with `purpose=batch`, streamed from the lines. */
async function uploadBatchFile(target: UpstreamTarget, lines: string[], signal: AbortSignal): Promise<string> {
  // A random boundary cannot occur in the JSON lines by chance.
  const boundary = `gateway-batch-${randomUUID()}`;
  const head =
    `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; ` +
    `filename="batch.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n`;
  const body = joinedBody(head, lines, "\n", `\r\n--${boundary}--\r\n`);
  const response = await callUpstream(
    target,
    {
      method: "POST",
      path: "/files",
      headers: { ...headersFor(target), "content-length": String(body.length) },
      body: { contentType: `multipart/form-data; boundary=${boundary}`, data: body.data },
    },
    signal,
  );
  const file = await readJsonObject(response);
  if (typeof file.id !== "string" || file.id === "") throw new UpstreamError("protocol", "the upstream file has no id");
  return file.id;
}

async function deleteFile(target: UpstreamTarget, fileId: string, signal: AbortSignal): Promise<void> {
  await discardBody(
    await callUpstream(
      target,
      { method: "DELETE", path: `/files/${pathSegment(fileId)}`, headers: headersFor(target) },
      signal,
    ),
  );
}

async function getBatch(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<JsonObject> {
  return readJsonObject(
    await callUpstream(
      target,
      { method: "GET", path: `/batches/${pathSegment(upstreamId)}`, headers: headersFor(target) },
      signal,
    ),
  );
}

/** "cancelling" and "finalizing" are still in progress: the output file is not there yet. */
const STATES: Record<string, NativeBatchState> = {
  validating: "in_progress",
  in_progress: "in_progress",
  finalizing: "in_progress",
  cancelling: "in_progress",
  completed: "ended",
  expired: "expired",
  cancelled: "cancelled",
  failed: "failed",
};

function stateOf(batch: JsonObject, apiKey: string): NativeBatchStatus {
  const state = STATES[stringOr(batch.status, "")];
  if (!state) throw new UpstreamError("protocol", "the upstream batch has no known status");
  if (state !== "failed") return { state };
  // `errors.data` lists why validation failed (one entry per bad line, at most a few shown).
  const errors = isObject(batch.errors) && Array.isArray(batch.errors.data) ? batch.errors.data.filter(isObject) : [];
  const messages = errors
    .map((error) => providerErrorMessage(error, apiKey))
    .filter((m): m is string => m !== undefined);
  return { state, message: messages.length > 0 ? messages.slice(0, 3).join("; ") : "the upstream failed the batch" };
}

/**
 * One line of the output or error file. A request the provider answered carries `response` (its
 * HTTP status and body, an error body included); one it never ran carries only `error`, and is
 * unfinished when the batch expired or was cancelled before reaching it.
 */
const UNFINISHED_CODES = new Set(["batch_expired", "batch_cancelled"]);

function resultOf(line: JsonObject, apiKey: string): NativeBatchResult | undefined {
  const customId = String(line.custom_id);
  const response = isObject(line.response) ? line.response : undefined;
  if (response) {
    const statusCode = typeof response.status_code === "number" ? response.status_code : 502;
    const body = isObject(response.body) ? response.body : {};
    if (statusCode >= 200 && statusCode < 300 && !isObject(body.error)) {
      if (!Array.isArray(body.choices))
        return {
          customId,
          ok: false,
          statusCode: 502,
          message: "the upstream answer has no choices array",
          type: "api_error",
        };
      return { customId, ok: true, statusCode, body, usage: usageFromOpenAi(body.usage) ?? NO_TOKENS };
    }
    const error = isObject(body.error) ? body.error : {};
    return {
      customId,
      ok: false,
      statusCode: statusCode >= 400 ? statusCode : statusForErrorObject(error),
      message: providerErrorMessage(body, apiKey) ?? `the upstream answered HTTP ${statusCode}`,
      type: errorType(error),
    };
  }
  const error = isObject(line.error) ? line.error : {};
  if (typeof error.code === "string" && UNFINISHED_CODES.has(error.code)) return undefined;
  return {
    customId,
    ok: false,
    statusCode: statusForErrorObject(error),
    message: providerErrorMessage({ error }, apiKey) ?? "the upstream reported an error for this item",
    type: errorType(error),
  };
}

function errorType(error: JsonObject): string {
  if (typeof error.type === "string" && error.type !== "") return error.type;
  if (typeof error.code === "string" && error.code !== "") return error.code;
  return "api_error";
}
