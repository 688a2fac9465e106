import { anthropicAdapter } from "./anthropic-adapter.js";
import { openAiAdapter } from "./openai-adapter.js";
import type { ProviderAdapter, ProviderKind } from "./provider.js";

const ADAPTERS: Record<ProviderKind, ProviderAdapter> = {
  openai: openAiAdapter,
  anthropic: anthropicAdapter,
};

export function adapterFor(kind: ProviderKind): ProviderAdapter {
  return ADAPTERS[kind];
}
