import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject, tokenCount } from "../json-shape.js";
import type { CacheSplitTokens } from "../cache-split-usage.js";

/**
 * The one mapping between Anthropic's `usage` and the chat format's, both directions. Anthropic
 * counts cache reads and cache writes apart from `input_tokens`; chat's prompt_tokens includes
 * them, with the cache reads repeated as cached_tokens and the writes as cache_write_tokens.
 */
export type AnthropicTokens = CacheSplitTokens;

/** Anthropic `usage` as counts; `previous` fills what a message_delta leaves out. */
export function anthropicTokens(usage: JsonValue | undefined, previous?: AnthropicTokens): AnthropicTokens {
  const u = isObject(usage) ? usage : {};
  // message_delta repeats only what it knows; keep message_start's counts for the rest.
  const pick = (value: JsonValue | undefined, before: number) =>
    value === undefined || value === null ? before : tokenCount(value);
  return {
    input: pick(u.input_tokens, previous?.input ?? 0),
    cacheRead: pick(u.cache_read_input_tokens, previous?.cacheRead ?? 0),
    cacheWrite: pick(u.cache_creation_input_tokens, previous?.cacheWrite ?? 0),
    output: pick(u.output_tokens, previous?.output ?? 0),
  };
}

/** A chat `usage` object → Anthropic counts (the inverse of chatUsageJson). */
export function tokensOfChatUsage(usage: JsonValue | undefined): AnthropicTokens {
  const u = isObject(usage) ? usage : {};
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cacheRead = tokenCount(prompt.cached_tokens);
  const cacheWrite = tokenCount(prompt.cache_write_tokens);
  return {
    input: Math.max(0, tokenCount(u.prompt_tokens) - cacheRead - cacheWrite),
    cacheRead,
    cacheWrite,
    output: tokenCount(u.completion_tokens),
  };
}

/** Counts → Anthropic's `usage` object. */
export function anthropicUsageJson(tokens: AnthropicTokens): JsonObject {
  return {
    input_tokens: tokens.input,
    output_tokens: tokens.output,
    cache_read_input_tokens: tokens.cacheRead,
    cache_creation_input_tokens: tokens.cacheWrite,
  };
}
