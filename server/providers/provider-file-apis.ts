import { anthropicFiles } from "./anthropic-files.js";
import { openAiFiles } from "./openai-files.js";
import type { ProviderKind } from "./provider.js";
import type { ProviderFileApi } from "./provider-files.js";

const FILE_APIS: Record<ProviderKind, ProviderFileApi> = {
  openai: openAiFiles,
  anthropic: anthropicFiles,
};

/** Where a provider's API lives when GATEWAY_CONFIG names no provider with its slug. */
export const PUBLIC_BASE_URLS: Record<ProviderKind, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
};

export function providerFileApiFor(kind: ProviderKind): ProviderFileApi {
  return FILE_APIS[kind];
}
