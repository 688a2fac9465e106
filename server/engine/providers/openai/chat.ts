import type { JsonObject } from "@bufbuild/protobuf";
import { isObject } from "../json-shape.js";
import { usageFromOpenAi } from "./usage.js";
import type { ChatApi } from "../chat-api.js";
import { UpstreamError, type UpstreamTarget, type UpstreamUsage } from "../provider.js";
import { statusForErrorObject, providerErrorMessage } from "../upstream-error-body.js";
import {
  expectEventStream,
  parseEventData,
  postUpstream,
  readJsonObject,
  upstreamEvents,
  type UpstreamResponse,
} from "../upstream-http.js";

/** Where an OpenAI-compatible API takes an operation, and how it is authenticated. */
export interface OpenAiRoute {
  /** The path under the base URL (query included) of `operation`. */
  path(target: UpstreamTarget, operation: "chat/completions" | "embeddings" | "responses"): string;
  headers(target: UpstreamTarget, accept: string): Record<string, string>;
}

/** OpenAI's own: `/chat/completions` under the base URL, a bearer key. */
export const OPENAI_ROUTE: OpenAiRoute = {
  path: (_target, operation) => `/${operation}`,
  headers: (target, accept) => ({ authorization: `Bearer ${target.apiKey}`, accept }),
};

/**
 * OpenAI-compatible providers (OpenAI, and the many that copy its API, Azure's included with its
 * own paths and header). The pipeline already speaks this format, so requests pass through with
 * only `model` and the streaming options set; tools, logprobs, response_format and the rest reach
 * the provider untouched.
 */
export function openAiCompatibleChat(route: OpenAiRoute): ChatApi {
  return {
    async chat(target, request, signal) {
      const { stream: _stream, stream_options: _options, ...rest } = request;
      const response = await postUpstream(
        target,
        route.path(target, "chat/completions"),
        route.headers(target, "application/json"),
        { ...rest, model: target.upstreamModelId },
        signal,
      );
      const body = await readJsonObject(response);
      if (isObject(body.error)) throw inBodyError(body, target.apiKey);
      if (!Array.isArray(body.choices)) throw new UpstreamError("protocol", "the upstream answer has no choices array");
      return { body, usage: usageFromOpenAi(body.usage) };
    },

    async chatStream(target, request, signal) {
      const streamOptions = isObject(request.stream_options) ? request.stream_options : {};
      const payload: JsonObject = {
        ...request,
        model: target.upstreamModelId,
        stream: true,
        // Without it OpenAI sends no usage in streams, and the call could not be accounted for.
        stream_options: { ...streamOptions, include_usage: true },
      };
      const response = await postUpstream(
        target,
        route.path(target, "chat/completions"),
        route.headers(target, "text/event-stream"),
        payload,
        signal,
      );
      await expectEventStream(response, target.apiKey);
      let usage: UpstreamUsage | undefined;
      return {
        chunks: openAiChunks(response, target.apiKey, (value) => (usage = value)),
        usage: () => usage,
      };
    },

    async embeddings(target, request, signal) {
      const payload: JsonObject = {
        ...request,
        model: target.upstreamModelId,
        input: request.input ?? null,
        encoding_format: "float",
      };
      const response = await postUpstream(
        target,
        route.path(target, "embeddings"),
        route.headers(target, "application/json"),
        payload,
        signal,
      );
      const body = await readJsonObject(response);
      if (isObject(body.error)) throw inBodyError(body, target.apiKey);
      return { vectors: vectorsOf(body), promptTokens: usageFromOpenAi(body.usage)?.promptTokens ?? 0, body };
    },
  };
}

export const openAiChat: ChatApi = openAiCompatibleChat(OPENAI_ROUTE);

/**
 * Chunks as the provider sends them. The stream is complete at `data: [DONE]`, or at its end
 * after a chunk with a finish_reason (some compatible providers omit [DONE]); the body is still
 * read to its end after [DONE] so the connection can be reused.
 */
async function* openAiChunks(
  response: UpstreamResponse,
  apiKey: string,
  onUsage: (usage: UpstreamUsage) => void,
): AsyncGenerator<JsonObject, void, undefined> {
  let done = false;
  let finished = false;
  for await (const event of upstreamEvents(response)) {
    if (done) continue;
    if (event.data === "[DONE]") {
      done = true;
      continue;
    }
    const chunk = parseEventData(event.data);
    if (isObject(chunk.error)) throw inBodyError(chunk, apiKey);
    const usage = usageFromOpenAi(chunk.usage);
    if (usage) onUsage(usage);
    if (
      Array.isArray(chunk.choices) &&
      chunk.choices.some((choice) => isObject(choice) && typeof choice.finish_reason === "string")
    )
      finished = true;
    yield chunk;
  }
  if (!done && !finished) throw new UpstreamError("cut", "the upstream stream ended before its final chunk");
}

/** `{"error":{…}}` sent with a 2xx status (in a stream, or as the whole body). */
export function inBodyError(body: JsonObject, apiKey: string): UpstreamError {
  const error = isObject(body.error) ? body.error : {};
  return new UpstreamError("status", providerErrorMessage(body, apiKey) ?? "the upstream reported an error", {
    status: statusForErrorObject(error),
  });
}

function vectorsOf(body: JsonObject): number[][] {
  const data = body.data;
  if (!Array.isArray(data)) throw new UpstreamError("protocol", "the upstream embeddings answer has no data array");
  const vectors: number[][] = new Array<number[]>(data.length);
  data.forEach((item, position) => {
    if (!isObject(item)) throw new UpstreamError("protocol", "an upstream embedding is not an object");
    const index = typeof item.index === "number" ? item.index : position;
    const embedding = item.embedding;
    if (!Number.isInteger(index) || index < 0 || index >= data.length || vectors[index] !== undefined) {
      throw new UpstreamError("protocol", "the upstream embedding indexes do not match the inputs");
    }
    if (!Array.isArray(embedding) || !embedding.every((value) => typeof value === "number")) {
      throw new UpstreamError("protocol", "an upstream embedding is not an array of numbers");
    }
    vectors[index] = embedding as number[];
  });
  return vectors;
}
