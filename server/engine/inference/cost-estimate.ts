import type { JsonValue } from "@bufbuild/protobuf";
import type { CatalogEndpoint } from "../catalog/catalog.js";
import { costUsd, maxUsd } from "../money/money.js";
import type { UpstreamUsage } from "../providers/provider.js";

/**
 * The worst-case cost of a call, reserved before it is sent so that concurrent calls cannot
 * overspend a budget together. Prompt tokens are estimated at one per four characters of the
 * request's text (plus a small overhead per message); completion tokens at the request's
 * `max_completion_tokens`/`max_tokens`, else the endpoint's `max_completion_tokens`, else
 * DEFAULT_COMPLETION_TOKENS — capped by what the context leaves. The most expensive endpoint that
 * may be tried sets the estimate. The settled cost is the real one.
 */
export const DEFAULT_COMPLETION_TOKENS = 4096;
const PER_MESSAGE_OVERHEAD = 4;

export function estimatePromptTokens(parts: readonly JsonValue[]): number {
  let characters = 0;
  for (const part of parts) characters += textLength(part);
  return Math.ceil(characters / 4) + PER_MESSAGE_OVERHEAD * parts.length;
}

function textLength(value: JsonValue): number {
  if (typeof value === "string") return value.length;
  if (value === null || typeof value !== "object") return String(value).length;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + textLength(item), 0);
  return Object.values(value).reduce<number>((sum, item) => sum + (item === undefined ? 0 : textLength(item)), 0);
}

export function worstCaseCost(
  endpoints: readonly CatalogEndpoint[],
  promptTokens: number,
  requestedCompletionTokens: number | undefined,
): string {
  return maxUsd(
    endpoints.map((endpoint) => {
      const room = Math.max(1, endpoint.contextLength - promptTokens);
      const completionTokens = Math.min(
        requestedCompletionTokens ?? endpoint.maxCompletionTokens ?? DEFAULT_COMPLETION_TOKENS,
        room,
      );
      // Any prompt token may turn out a cache write, which some providers price above `prompt`.
      const uncached = costUsd(endpoint.pricing, { promptTokens, completionTokens });
      return maxUsd([
        uncached,
        costUsd(endpoint.pricing, { promptTokens, completionTokens, cacheWriteTokens: promptTokens }),
      ]);
    }),
  );
}

/** When a provider reports no usage (or a stream broke), tokens are estimated from the text. */
export function estimatedUsage(promptTokens: number, completion: string): UpstreamUsage {
  return { promptTokens, completionTokens: Math.ceil(completion.length / 4), reasoningTokens: 0, cachedTokens: 0 };
}
