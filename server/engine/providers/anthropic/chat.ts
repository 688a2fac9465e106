import type { JsonObject } from "@bufbuild/protobuf";
import { anthropicRequest } from "./chat-request.js";
import { AnthropicStreamTranslator, chatCompletionFromMessage } from "./chat-response.js";
import { isObject } from "../json-shape.js";
import type { ChatApi } from "../chat-api.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { providerErrorMessage, statusForErrorObject } from "../upstream-error-body.js";
import {
  expectEventStream,
  parseEventData,
  postUpstream,
  readJsonObject,
  upstreamEvents,
  type UpstreamResponse,
} from "../upstream-http.js";

/** The Anthropic Messages API behind the OpenAI chat format (translation in chat-request.ts and chat-response.ts). */
export const ANTHROPIC_VERSION = "2023-06-01";

export const anthropicChat: ChatApi = {
  async chat(target, request, signal) {
    const payload = anthropicRequest(request, target.upstreamModelId, false);
    const response = await postUpstream(
      target,
      "/messages",
      anthropicHeaders(target, "application/json"),
      payload,
      signal,
    );
    const message = await readJsonObject(response);
    if (message.type === "error") throw inStreamError(message, target.apiKey);
    return chatCompletionFromMessage(message);
  },

  async chatStream(target, request, signal) {
    const payload = anthropicRequest(request, target.upstreamModelId, true);
    const response = await postUpstream(
      target,
      "/messages",
      anthropicHeaders(target, "text/event-stream"),
      payload,
      signal,
    );
    await expectEventStream(response, target.apiKey);
    const translator = new AnthropicStreamTranslator();
    return { chunks: anthropicChunks(response, translator, target.apiKey), usage: () => translator.usage() };
  },

  embeddings() {
    return Promise.reject(new UpstreamError("unsupported", "Anthropic has no embeddings API"));
  },
};

export function anthropicHeaders(target: UpstreamTarget, accept: string): Record<string, string> {
  return { "x-api-key": target.apiKey, "anthropic-version": ANTHROPIC_VERSION, accept };
}

async function* anthropicChunks(
  response: UpstreamResponse,
  translator: AnthropicStreamTranslator,
  apiKey: string,
): AsyncGenerator<JsonObject, void, undefined> {
  for await (const event of upstreamEvents(response)) {
    if (translator.stopped) continue;
    const data = parseEventData(event.data);
    // The event name is also inside the payload as `type`; either is enough.
    const name = event.event ?? (typeof data.type === "string" ? data.type : "");
    if (name === "error") throw inStreamError(data, apiKey);
    yield* translator.translate(name, data);
  }
  if (!translator.stopped) throw new UpstreamError("cut", "the upstream stream ended before message_stop");
}

/** `{"type":"error","error":{"type":"overloaded_error",…}}` sent with a 2xx status. */
export function inStreamError(data: JsonObject, apiKey: string): UpstreamError {
  const error = isObject(data.error) ? data.error : {};
  return new UpstreamError("status", providerErrorMessage(data, apiKey) ?? "the upstream stream reported an error", {
    status: statusForErrorObject(error),
  });
}
