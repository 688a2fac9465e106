import type { JsonObject } from "@bufbuild/protobuf";
import { upstreamUsage } from "../cache-split-usage.js";
import { isObject } from "../json-shape.js";
import type { NativeApi } from "../native-api.js";
import { UpstreamError } from "../provider.js";
import {
  expectEventStream,
  parseEventData,
  postUpstream,
  readJsonObject,
  upstreamEvents,
  type UpstreamResponse,
} from "../upstream-http.js";
import { anthropicHeaders, inStreamError } from "./chat.js";
import { anthropicTokens, type AnthropicTokens } from "./usage.js";

/**
 * The Messages API, natively: POST /messages to an Anthropic provider passes the client's body
 * through (only `model` and `stream` set), so every field Anthropic has or adds (`thinking`,
 * `top_k`, `mcp_servers`, `container`, `cache_control` on any block, …) reaches it, and its
 * answer and every stream event come back as they came.
 */
export const anthropicMessages: NativeApi = {
  speaks: () => true,

  async answer(target, body, signal) {
    const response = await postUpstream(
      target,
      "/messages",
      anthropicHeaders(target, "application/json"),
      { ...body, model: target.upstreamModelId },
      signal,
    );
    const message = await readJsonObject(response);
    if (message.type === "error") throw inStreamError(message, target.apiKey);
    if (!Array.isArray(message.content))
      throw new UpstreamError("protocol", "the upstream answer has no content array");
    return {
      body: message,
      usage: message.usage === undefined ? undefined : upstreamUsage(anthropicTokens(message.usage)),
    };
  },

  async stream(target, body, signal) {
    const payload = { ...body, model: target.upstreamModelId, stream: true };
    const response = await postUpstream(
      target,
      "/messages",
      anthropicHeaders(target, "text/event-stream"),
      payload,
      signal,
    );
    await expectEventStream(response, target.apiKey);
    const counts: { tokens?: AnthropicTokens } = {};
    return {
      events: messageEvents(response, target.apiKey, counts),
      usage: () => (counts.tokens ? upstreamUsage(counts.tokens) : undefined),
    };
  },
};

/**
 * The stream's events as Anthropic sent them, each with its `type`. The counts start at
 * message_start and message_delta completes them; the stream is complete at message_stop.
 */
async function* messageEvents(
  response: UpstreamResponse,
  apiKey: string,
  counts: { tokens?: AnthropicTokens },
): AsyncGenerator<JsonObject, void, undefined> {
  let stopped = false;
  for await (const event of upstreamEvents(response)) {
    if (stopped) continue;
    const data = parseEventData(event.data);
    const type = event.event ?? (typeof data.type === "string" ? data.type : "");
    if (type === "error") throw inStreamError(data, apiKey);
    data.type = type;
    if (type === "message_start")
      counts.tokens = anthropicTokens(isObject(data.message) ? data.message.usage : undefined);
    else if (type === "message_delta") counts.tokens = anthropicTokens(data.usage, counts.tokens);
    else if (type === "message_stop") stopped = true;
    yield data;
  }
  if (!stopped) throw new UpstreamError("cut", "the upstream stream ended before message_stop");
}
