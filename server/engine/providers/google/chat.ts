import type { JsonObject } from "@bufbuild/protobuf";
import type { ChatApi } from "../chat-api.js";
import { isObject } from "../json-shape.js";
import { UpstreamError } from "../provider.js";
import {
  expectEventStream,
  parseEventData,
  readJsonObject,
  upstreamEvents,
  type UpstreamResponse,
} from "../upstream-http.js";
import { geminiRequest } from "./chat-request.js";
import { chatCompletionFromGemini, GeminiStreamTranslator } from "./chat-response.js";
import { googleEmbeddings } from "./embeddings.js";
import { inBodyError } from "./errors.js";
import { modelPath, postGoogle } from "./upstream-call.js";

/** Gemini's generateContent behind the OpenAI chat format, on the Gemini API or Vertex AI (README.md). */
export const googleChat: ChatApi = {
  async chat(target, request, signal) {
    const response = await postGoogle(
      target,
      modelPath(target.upstreamModelId, "generateContent"),
      geminiRequest(request),
      "application/json",
      signal,
    );
    const answer = await readJsonObject(response);
    if (isObject(answer.error)) throw inBodyError(answer, target.apiKey);
    return chatCompletionFromGemini(answer, target.upstreamModelId);
  },

  async chatStream(target, request, signal) {
    const path = `${modelPath(target.upstreamModelId, "streamGenerateContent")}?alt=sse`;
    const response = await postGoogle(target, path, geminiRequest(request), "text/event-stream", signal);
    await expectEventStream(response, target.apiKey);
    const translator = new GeminiStreamTranslator(target.upstreamModelId);
    return { chunks: geminiChunks(response, translator, target.apiKey), usage: () => translator.usage() };
  },

  embeddings: googleEmbeddings,
};

/** Gemini ends its stream without a closing event: an answer without a finishReason is a cut one. */
async function* geminiChunks(
  response: UpstreamResponse,
  translator: GeminiStreamTranslator,
  apiKey: string,
): AsyncGenerator<JsonObject, void, undefined> {
  for await (const event of upstreamEvents(response)) {
    const data = parseEventData(event.data);
    if (isObject(data.error)) throw inBodyError(data, apiKey);
    yield* translator.translate(data);
  }
  if (!translator.finished) throw new UpstreamError("cut", "the upstream stream ended before a finishReason");
  yield* translator.end();
}
