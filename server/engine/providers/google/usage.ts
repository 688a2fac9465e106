import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject, tokenCount } from "../json-shape.js";
import type { UpstreamUsage } from "../provider.js";

/**
 * Gemini's `usageMetadata` as the ledger's counts. `promptTokenCount` already includes the cached
 * tokens (`cachedContentTokenCount` is the part of it read from a context cache) and tool-use
 * prompts are counted apart (`toolUsePromptTokenCount`, the results of Google's own tools).
 * Thinking is billed as output but reported apart from `candidatesTokenCount`, so completion is
 * their sum, as chat's completion_tokens includes reasoning_tokens.
 */
export function usageOfMetadata(metadata: JsonValue | undefined): UpstreamUsage | undefined {
  if (!isObject(metadata)) return undefined;
  const thoughts = tokenCount(metadata.thoughtsTokenCount);
  return {
    promptTokens: tokenCount(metadata.promptTokenCount) + tokenCount(metadata.toolUsePromptTokenCount),
    completionTokens: tokenCount(metadata.candidatesTokenCount) + thoughts,
    reasoningTokens: thoughts,
    cachedTokens: tokenCount(metadata.cachedContentTokenCount),
  };
}

/** The counts as the chat `usage` object. */
export function chatUsageJson(usage: UpstreamUsage): JsonObject {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}
