import type { ProviderKind } from "../providers/provider.js";

/**
 * The request parameters an endpoint accepts when the config does not list them: what each wire
 * format's API documents. Routing with `require_parameters` and the models list read these.
 */
const CHAT_PARAMETERS: Record<ProviderKind, readonly string[]> = {
  openai: [
    "temperature", "top_p", "max_tokens", "stop", "frequency_penalty", "presence_penalty", "seed", "logit_bias",
    "logprobs", "top_logprobs", "response_format", "tools", "tool_choice", "parallel_tool_calls",
  ],
  anthropic: ["temperature", "top_p", "top_k", "max_tokens", "stop", "tools", "tool_choice", "reasoning"],
};

const EMBEDDINGS_PARAMETERS: readonly string[] = ["dimensions", "input_type", "encoding_format"];

export function defaultSupportedParameters(kind: ProviderKind, outputModalities: readonly string[]): string[] {
  return [...(outputModalities.includes("embeddings") ? EMBEDDINGS_PARAMETERS : CHAT_PARAMETERS[kind])];
}
