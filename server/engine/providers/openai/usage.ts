import { isObject, tokenCount } from "../json-shape.js";
import type { UpstreamUsage } from "../provider.js";

/** The OpenAI `usage` object (also what the Anthropic adapter emits) as the ledger's counts. */
export function usageFromOpenAi(value: unknown): UpstreamUsage | undefined {
  if (!isObject(value)) return undefined;
  const completionDetails = isObject(value.completion_tokens_details) ? value.completion_tokens_details : {};
  const promptDetails = isObject(value.prompt_tokens_details) ? value.prompt_tokens_details : {};
  return {
    promptTokens: tokenCount(value.prompt_tokens),
    completionTokens: tokenCount(value.completion_tokens),
    reasoningTokens: tokenCount(completionDetails.reasoning_tokens),
    cachedTokens: tokenCount(promptDetails.cached_tokens),
    // Not OpenAI's own: OpenAI-compatible providers that bill cache writes report them here.
    cacheWriteTokens: tokenCount(promptDetails.cache_write_tokens),
  };
}

/** The Responses API's `usage` (input/output tokens, with cached and reasoning details) as the ledger's counts. */
export function usageFromResponses(value: unknown): UpstreamUsage | undefined {
  if (!isObject(value)) return undefined;
  const inputDetails = isObject(value.input_tokens_details) ? value.input_tokens_details : {};
  const outputDetails = isObject(value.output_tokens_details) ? value.output_tokens_details : {};
  return {
    promptTokens: tokenCount(value.input_tokens),
    completionTokens: tokenCount(value.output_tokens),
    reasoningTokens: tokenCount(outputDetails.reasoning_tokens),
    cachedTokens: tokenCount(inputDetails.cached_tokens),
  };
}
