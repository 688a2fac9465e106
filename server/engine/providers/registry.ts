import { anthropicProvider } from "./anthropic/provider.js";
import { azureProvider } from "./azure/provider.js";
import { bedrockProvider } from "./bedrock/provider.js";
import { googleProvider } from "./google/provider.js";
import { openAiProvider } from "./openai/provider.js";
import { UpstreamError } from "./provider.js";
import type { Provider } from "./provider-api.js";
import type { ProviderKind } from "./provider-kind.js";

/**
 * The one provider registry: a provider kind is its folder, its name in provider-kind.ts and one
 * line here. The kinds the configuration accepts are this table's keys.
 */
const PROVIDERS = {
  openai: openAiProvider,
  anthropic: anthropicProvider,
  azure: azureProvider,
  bedrock: bedrockProvider,
  google: googleProvider,
} satisfies Record<ProviderKind, Provider>;

export function isProviderKind(value: string): value is ProviderKind {
  return Object.hasOwn(PROVIDERS, value);
}

export const PROVIDER_KINDS: readonly ProviderKind[] = Object.keys(PROVIDERS).filter(isProviderKind);

export function providerFor(kind: ProviderKind): Provider {
  return PROVIDERS[kind];
}

type OptionalPart = "files" | "nativeBatches" | "video";

/**
 * A part the caller cannot do without. A kind lacking it fails as every call a provider cannot
 * serve does ("unsupported"), which the callers already turn into their error answers.
 */
export function requiredPart<P extends OptionalPart>(kind: ProviderKind, part: P): NonNullable<Provider[P]> {
  const found = PROVIDERS[kind][part];
  if (found === undefined || found === null)
    throw new UpstreamError("unsupported", `the ${kind} provider has no ${part} API`);
  return found;
}
