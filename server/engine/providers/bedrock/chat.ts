import type { JsonObject } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import type { ChatApi } from "../chat-api.js";
import { UpstreamError } from "../provider.js";
import { readJsonObject, type UpstreamResponse } from "../upstream-http.js";
import { converseRequest } from "./converse-request.js";
import { chatCompletionFromConverse } from "./converse-response.js";
import { ConverseStreamTranslator } from "./converse-stream.js";
import { bedrockEmbeddings } from "./embeddings.js";
import { EVENT_STREAM_CONTENT_TYPE, eventStreamMessages, payloadJson, streamFailure } from "./event-stream.js";
import { modelPath } from "./model-id.js";
import { postBedrock } from "./signing.js";

/**
 * Bedrock's Converse API behind the OpenAI chat format (translation in converse-request.ts,
 * converse-response.ts and converse-stream.ts).
 */
export const bedrockChat: ChatApi = {
  async chat(target, request, signal) {
    const payload = converseRequest(request, target.upstreamModelId);
    const response = await postBedrock(
      target,
      modelPath(target.upstreamModelId, "converse"),
      payload,
      "application/json",
      signal,
    );
    const answer = await readJsonObject(response);
    return chatCompletionFromConverse(answer, completionId(response), target.upstreamModelId);
  },

  async chatStream(target, request, signal) {
    const payload = converseRequest(request, target.upstreamModelId);
    const response = await postBedrock(
      target,
      modelPath(target.upstreamModelId, "converse-stream"),
      payload,
      EVENT_STREAM_CONTENT_TYPE,
      signal,
    );
    const type = String(response.headers["content-type"] ?? "");
    if (!type.includes(EVENT_STREAM_CONTENT_TYPE)) {
      response.body.destroy();
      throw new UpstreamError(
        "protocol",
        `the upstream answered a stream request with "${type.slice(0, 60)}" instead of an event stream`,
      );
    }
    const translator = new ConverseStreamTranslator(completionId(response), target.upstreamModelId);
    const apiKey = target.settings?.aws?.secretAccessKey ?? target.apiKey;
    return { chunks: converseChunks(response, translator, apiKey), usage: () => translator.usage() };
  },

  embeddings: bedrockEmbeddings,
};

/**
 * The chunks of a ConverseStream body. The answer is complete at messageStop; the metadata event
 * with the usage follows it. Exception frames fail the stream with the status they stand for.
 */
async function* converseChunks(
  response: UpstreamResponse,
  translator: ConverseStreamTranslator,
  apiKey: string,
): AsyncGenerator<JsonObject, void, undefined> {
  for await (const message of eventStreamMessages(response)) {
    if (message.messageType === "exception" || message.messageType === "error") throw streamFailure(message, apiKey);
    if (message.messageType !== "event") continue;
    yield* translator.translate(message.name, payloadJson(message));
  }
  if (!translator.stopped) throw new UpstreamError("cut", "the upstream stream ended before messageStop");
}

/** Converse answers carry no id; Bedrock's request id names the call in its logs, so it names the completion. */
function completionId(response: UpstreamResponse): string {
  const requestId = response.headers["x-amzn-requestid"];
  const id = typeof requestId === "string" && /^[A-Za-z0-9-]{1,64}$/.test(requestId) ? requestId : randomUUID();
  return `chatcmpl-${id}`;
}
