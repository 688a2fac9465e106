/**
 * What the codecs from chat to another wire format (anthropic/, google/, bedrock/) do with the
 * fields they do not translate, both ways: a field neither chat nor the codec knows is the client's
 * word to the provider, or the provider's to the client, and travels as it came. Mapping tables:
 * docs/providers.md.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { isObject } from "./json-shape.js";

/**
 * The OpenAI chat API's own request fields, with OpenRouter's additions that the gateway's chat
 * format carries. A codec maps those its provider has a counterpart for and does not send the
 * rest: the provider would refuse a field it does not know, and whether an endpoint may serve a
 * request that uses one is routing's decision (`supported_parameters`).
 */
export const CHAT_REQUEST_FIELDS: ReadonlySet<string> = new Set([
  "messages",
  "model",
  "models",
  "provider",
  "session_id",
  "user",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "top_k",
  "top_a",
  "min_p",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "n",
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "functions",
  "function_call",
  "response_format",
  "reasoning",
  "reasoning_effort",
  "include_reasoning",
  "verbosity",
  "metadata",
  "store",
  "service_tier",
  "prompt_cache_key",
  "safety_identifier",
  "modalities",
  "audio",
  "prediction",
  "web_search_options",
  "transforms",
  "route",
  "usage",
  "plugins",
  "preset",
  "trace",
  "debug",
  "extra_body",
]);

/** The OpenAI embeddings API's own request fields (with `input_type`, which the codecs map), as above. */
export const EMBEDDINGS_REQUEST_FIELDS: ReadonlySet<string> = new Set([
  "input",
  "model",
  "models",
  "provider",
  "session_id",
  "user",
  "dimensions",
  "encoding_format",
  "input_type",
  "extra_body",
]);

/**
 * The request's fields that are not chat's (or, given `known`, not the API's), onto the provider's
 * body as sent (Anthropic's `thinking` or `mcp_servers`, Gemini's `safetySettings`, Bedrock's
 * `guardrailConfig`, Cohere's `truncate`, …). Where the codec wrote an object of the same name, the
 * client's keys are added to it.
 */
export function copyProviderRequestFields(
  request: JsonObject,
  out: JsonObject,
  known: ReadonlySet<string> = CHAT_REQUEST_FIELDS,
): void {
  for (const name in request) {
    const value = request[name];
    if (known.has(name) || value === undefined) continue;
    const written = out[name];
    if (written === undefined) out[name] = value;
    else if (isObject(written) && isObject(value)) out[name] = { ...written, ...value };
  }
}

/** An answer's fields other than `known` (the ones the codec translates), onto the chat answer as they came. */
export function copyProviderAnswerFields(answer: JsonObject, known: ReadonlySet<string>, out: JsonObject): void {
  for (const name in answer) {
    if (!known.has(name) && answer[name] !== undefined && out[name] === undefined) out[name] = answer[name]!;
  }
}
