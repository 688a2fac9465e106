import type { JsonObject } from "@bufbuild/protobuf";
import { ANTHROPIC_VERSION } from "./chat.js";
import { anthropicRequest } from "./chat-request.js";
import { chatCompletionFromMessage } from "./chat-response.js";
import { isObject, tokenCount } from "../json-shape.js";
import type { NativeBatchApi, NativeBatchResult, NativeBatchStatus } from "../native-batch-api.js";
import { joinedBody, NO_TOKENS, parseResultLine, pathSegment, unlessNotFound } from "../native-batch-wire.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { providerErrorMessage, statusForErrorObject } from "../upstream-error-body.js";
import { callUpstream, discardBody, readJsonObject, upstreamLines } from "../upstream-http.js";

/**
 * Anthropic Message Batches (`/v1/messages/batches`): each item is the Messages request the live
 * adapter would send, and each result the message it would have answered, so a batch item and a
 * live call give the same chat completion.
 */
export const anthropicNativeBatch: NativeBatchApi = {
  async submit(target, requests, signal) {
    // Translated before the upload starts: an item this API cannot carry fails the submission
    // with "unsupported" instead of breaking the upload midway.
    const items = requests.map((item) => {
      try {
        return JSON.stringify({
          custom_id: item.customId,
          params: anthropicRequest(item.body, target.upstreamModelId, false),
        });
      } catch (err) {
        if (err instanceof UpstreamError)
          throw new UpstreamError(err.failure, `item ${item.customId}: ${err.message}`, err.options);
        throw err;
      }
    });
    const body = joinedBody('{"requests":[', items, ",", "]}");
    const response = await callUpstream(
      target,
      {
        method: "POST",
        path: "/messages/batches",
        headers: { ...headersFor(target), "content-length": String(body.length) },
        body: { contentType: "application/json", data: body.data },
      },
      signal,
    );
    const batch = await readJsonObject(response);
    if (typeof batch.id !== "string" || batch.id === "")
      throw new UpstreamError("protocol", "the upstream batch has no id");
    return batch.id;
  },

  async status(target, upstreamId, signal) {
    return stateOf(await getBatch(target, upstreamId, signal));
  },

  async *results(target, upstreamId, signal) {
    const batch = await getBatch(target, upstreamId, signal);
    if (typeof batch.results_url !== "string")
      throw new UpstreamError("protocol", "the upstream batch has no results yet");
    const response = await callUpstream(
      target,
      { method: "GET", path: resultsPath(target, upstreamId, batch.results_url), headers: headersFor(target) },
      signal,
    );
    for await (const line of upstreamLines(response)) {
      const result = resultOf(parseResultLine(line), target.apiKey);
      if (result) yield result;
    }
  },

  async cancel(target, upstreamId, signal) {
    await discardBody(
      await callUpstream(
        target,
        { method: "POST", path: `${batchPath(upstreamId)}/cancel`, headers: headersFor(target) },
        signal,
      ),
    );
  },

  async remove(target, upstreamId, signal) {
    await unlessNotFound(async () =>
      discardBody(
        await callUpstream(
          target,
          { method: "DELETE", path: batchPath(upstreamId), headers: headersFor(target) },
          signal,
        ),
      ),
    );
    return "deleted";
  },
};

function headersFor(target: UpstreamTarget): Record<string, string> {
  return { "x-api-key": target.apiKey, "anthropic-version": ANTHROPIC_VERSION, accept: "application/json" };
}

function batchPath(upstreamId: string): string {
  return `/messages/batches/${pathSegment(upstreamId)}`;
}

async function getBatch(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<JsonObject> {
  return readJsonObject(
    await callUpstream(target, { method: "GET", path: batchPath(upstreamId), headers: headersFor(target) }, signal),
  );
}

/**
 * Anthropic has no batch-level failure: a batch always ends, and how is read from what happened
 * to it. A cancel we asked for makes it "cancelled", items that ran out of time make it
 * "expired" (the finished ones keep their results either way). "canceling" is still in
 * progress: its results file does not exist yet.
 */
function stateOf(batch: JsonObject): NativeBatchStatus {
  switch (batch.processing_status) {
    case "in_progress":
    case "canceling":
      return { state: "in_progress" };
    case "ended": {
      if (typeof batch.cancel_initiated_at === "string") return { state: "cancelled" };
      const counts = isObject(batch.request_counts) ? batch.request_counts : {};
      return { state: tokenCount(counts.expired) > 0 ? "expired" : "ended" };
    }
    default:
      throw new UpstreamError("protocol", "the upstream batch has no known processing_status");
  }
}

/**
 * The key goes only where the batch itself lives: `results_url` is followed when it is under
 * the configured base URL, otherwise the documented path under the base URL is used instead.
 */
function resultsPath(target: UpstreamTarget, upstreamId: string, resultsUrl: string): string {
  const base = target.baseUrl.replace(/\/+$/, "");
  if (resultsUrl.startsWith(`${base}/`)) return resultsUrl.slice(base.length);
  return `${batchPath(upstreamId)}/results`;
}

/** One result line; canceled and expired items did not finish and yield nothing. */
function resultOf(line: JsonObject, apiKey: string): NativeBatchResult | undefined {
  const customId = String(line.custom_id);
  const result = isObject(line.result) ? line.result : {};
  if (result.type === "succeeded" && isObject(result.message)) {
    try {
      const { body, usage } = chatCompletionFromMessage(result.message);
      return { customId, ok: true, statusCode: 200, body, usage: usage ?? NO_TOKENS };
    } catch (err) {
      // One malformed message fails its item, not the reading of every other result.
      if (err instanceof UpstreamError)
        return { customId, ok: false, statusCode: 502, message: err.message, type: "api_error" };
      throw err;
    }
  }
  if (result.type === "errored") {
    // `error` is the error response body Anthropic would have sent: {type: "error", error: {type, message}}.
    const envelope = isObject(result.error) ? result.error : {};
    const error = isObject(envelope.error) ? envelope.error : envelope;
    return {
      customId,
      ok: false,
      statusCode: statusForErrorObject(error),
      message: providerErrorMessage(envelope, apiKey) ?? "the upstream reported an error for this item",
      type: typeof error.type === "string" ? error.type : "api_error",
    };
  }
  // "canceled", "expired", and result types Anthropic may add: the item is unfinished.
  return undefined;
}
