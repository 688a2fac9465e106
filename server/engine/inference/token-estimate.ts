import type { CatalogEndpoint } from "../catalog/catalog.js";
import { DEFAULT_COMPLETION_TOKENS } from "./cost-estimate.js";

/**
 * The most tokens a call may use, reserved against the token limits it is admitted under
 * (docs/api/limits.md) and settled with what the provider reports: the prompt's estimate
 * (estimatePromptTokens) plus its output cap — `max_completion_tokens`, `max_tokens` or
 * `max_output_tokens`, else DEFAULT_COMPLETION_TOKENS — capped by what the endpoint can generate
 * and what its context leaves after the prompt; the largest over the endpoints that may be tried.
 */
export function worstCaseTokens(
  endpoints: readonly CatalogEndpoint[],
  promptTokens: number,
  requestedCompletionTokens: number | undefined,
): number {
  let worst = promptTokens;
  for (const endpoint of endpoints) {
    const room = Math.max(0, endpoint.contextLength - promptTokens);
    const completion = Math.min(
      requestedCompletionTokens ?? DEFAULT_COMPLETION_TOKENS,
      endpoint.maxCompletionTokens ?? Number.POSITIVE_INFINITY,
      room,
    );
    worst = Math.max(worst, promptTokens + completion);
  }
  return worst;
}

/** What a settled call used of a token limit: its prompt and its completion, as the ledger's `total_tokens`. */
export function usedTokens(usage: { promptTokens: number; completionTokens: number }): number {
  return usage.promptTokens + usage.completionTokens;
}
