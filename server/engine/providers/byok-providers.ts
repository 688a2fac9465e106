import { gatewayError } from "../../../wire/errors.js";
import type { ProviderKind } from "./provider-kind.js";

/**
 * Providers a workspace can bring its own key for. `kind` is the provider registry's kind, the
 * wire format the gateway speaks to them: the OpenAI chat completions API (which the
 * OpenAI-compatible hosts below also serve, and Azure under its own paths), the Anthropic messages
 * API, Gemini's, or Bedrock's Converse (with a Bedrock API key). None derives its URL from the
 * credential, so a private endpoint of any of them needs a base_url.
 */
export interface ByokProvider {
  slug: string;
  name: string;
  kind: ProviderKind;
}

export const BYOK_PROVIDERS: readonly ByokProvider[] = [
  { slug: "openai", name: "OpenAI", kind: "openai" },
  { slug: "anthropic", name: "Anthropic", kind: "anthropic" },
  { slug: "azure", name: "Azure OpenAI", kind: "azure" },
  { slug: "google-ai-studio", name: "Google AI Studio", kind: "google" },
  { slug: "amazon-bedrock", name: "Amazon Bedrock", kind: "bedrock" },
  { slug: "together", name: "Together", kind: "openai" },
  { slug: "fireworks", name: "Fireworks", kind: "openai" },
  { slug: "deepinfra", name: "DeepInfra", kind: "openai" },
  { slug: "groq", name: "Groq", kind: "openai" },
  { slug: "mistral", name: "Mistral", kind: "openai" },
];

const bySlug = new Map(BYOK_PROVIDERS.map((provider) => [provider.slug, provider]));

export function findByokProvider(slug: string): ByokProvider | undefined {
  return bySlug.get(slug);
}

/** The provider named by a request field; 400 listing the accepted slugs otherwise. */
export function requireByokProvider(slug: string, field: string): ByokProvider {
  const provider = bySlug.get(slug);
  if (!provider) throw gatewayError(400, `${field} must be one of: ${BYOK_PROVIDERS.map((p) => p.slug).join(", ")}`);
  return provider;
}
