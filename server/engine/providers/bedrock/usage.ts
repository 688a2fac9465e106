import type { JsonValue } from "@bufbuild/protobuf";
import { isObject, tokenCount } from "../json-shape.js";
import type { CacheSplitTokens } from "../cache-split-usage.js";

/**
 * Bedrock's TokenUsage as the chat format's. Like Anthropic's API (which most cached Bedrock
 * models are), `inputTokens` leaves out the tokens read from and written to the prompt cache
 * (`totalTokens` is input + output + both cache counts); chat's prompt_tokens includes them.
 */
export type BedrockTokens = CacheSplitTokens;

export function bedrockTokens(usage: JsonValue | undefined): BedrockTokens | undefined {
  if (!isObject(usage)) return undefined;
  return {
    input: tokenCount(usage.inputTokens),
    cacheRead: tokenCount(usage.cacheReadInputTokens),
    cacheWrite: tokenCount(usage.cacheWriteInputTokens),
    output: tokenCount(usage.outputTokens),
  };
}
