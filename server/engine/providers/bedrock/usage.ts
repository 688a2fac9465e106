import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject, tokenCount } from "../json-shape.js";
import type { UpstreamUsage } from "../provider.js";

/**
 * Bedrock's TokenUsage as the chat format's. Like Anthropic's API (which most cached Bedrock
 * models are), `inputTokens` leaves out the tokens read from and written to the prompt cache
 * (`totalTokens` is input + output + both cache counts); chat's prompt_tokens includes them.
 */
export interface BedrockTokens {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export function bedrockTokens(usage: JsonValue | undefined): BedrockTokens | undefined {
  if (!isObject(usage)) return undefined;
  return {
    input: tokenCount(usage.inputTokens),
    cacheRead: tokenCount(usage.cacheReadInputTokens),
    cacheWrite: tokenCount(usage.cacheWriteInputTokens),
    output: tokenCount(usage.outputTokens),
  };
}

export function upstreamUsage(tokens: BedrockTokens): UpstreamUsage {
  return {
    promptTokens: tokens.input + tokens.cacheRead + tokens.cacheWrite,
    completionTokens: tokens.output,
    // Converse reports no reasoning count; reasoning is billed inside outputTokens.
    reasoningTokens: 0,
    cachedTokens: tokens.cacheRead,
    cacheWriteTokens: tokens.cacheWrite,
  };
}

export function chatUsageJson(tokens: BedrockTokens): JsonObject {
  const usage = upstreamUsage(tokens);
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: tokens.cacheRead, cache_write_tokens: tokens.cacheWrite },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}
