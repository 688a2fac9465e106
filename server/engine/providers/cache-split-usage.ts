import type { JsonObject } from "@bufbuild/protobuf";
import type { UpstreamUsage } from "./provider.js";

/**
 * Token counts of the providers that report prompt tokens apart from those read from and written
 * to their prompt cache (Anthropic's `input_tokens`, Bedrock's `inputTokens`). Chat's
 * prompt_tokens includes both, with the reads repeated as cached_tokens and the writes as
 * cache_write_tokens.
 */
export interface CacheSplitTokens {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export function upstreamUsage(tokens: CacheSplitTokens): UpstreamUsage {
  return {
    promptTokens: tokens.input + tokens.cacheRead + tokens.cacheWrite,
    completionTokens: tokens.output,
    // Neither counts reasoning apart: thinking is billed inside the output tokens.
    reasoningTokens: 0,
    cachedTokens: tokens.cacheRead,
    cacheWriteTokens: tokens.cacheWrite,
  };
}

/** The counts as the chat `usage` object. */
export function chatUsageJson(tokens: CacheSplitTokens): JsonObject {
  const usage = upstreamUsage(tokens);
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: tokens.cacheRead, cache_write_tokens: tokens.cacheWrite },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}
