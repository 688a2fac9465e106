import { startMockUpstream, type MockUpstream, type RecordedUpstreamRequest } from "../upstream/mock-upstream.js";
import { MOCK_UPSTREAM_API_KEY } from "../upstream/mock-wire.js";
import { writeCatalogFile } from "./catalog-file.js";
import { startTestGateway } from "./gateway.js";
import type { InferenceGateway } from "./inference-gateway.js";

/**
 * A test gateway with one provider of every kind on our mock upstream, each serving one model
 * `k/<slug>` (upstream id in KIND_MODELS), for tests that go through every API on every kind:
 * - `openai-native`: kind openai with `responses_api: true` (an OpenAI-compatible host that says
 *   it serves the Responses API, as OpenAI's own host does by default);
 * - `compat`: kind openai without the setting (an OpenAI-compatible host: chat only);
 * - `azure-v1` (Azure's v1 surface, Responses served) and `azure-dated` (a dated api_version);
 * - `anthropic`, `gemini` (kind google, API key), `bedrock` (API key, an Amazon Nova model);
 * - `k/both`: `openai-native` first (cheaper), then `compat`, for fallbacks between a native and a
 *   translated endpoint;
 * - embeddings `e/<slug>` on compat, azure-v1, gemini and bedrock (Titan).
 */
export const KIND_SLUGS = [
  "openai-native",
  "compat",
  "azure-v1",
  "azure-dated",
  "anthropic",
  "gemini",
  "bedrock",
] as const;
export type KindSlug = (typeof KIND_SLUGS)[number];

export const KIND_MODELS: Record<KindSlug, string> = {
  "openai-native": "gpt-native",
  compat: "compat-chat",
  "azure-v1": "azure-v1-deployment",
  "azure-dated": "azure-dated-deployment",
  anthropic: "claude-kinds",
  gemini: "gemini-kinds",
  bedrock: "amazon.nova-kinds-v1:0",
};

export const EMBEDDING_MODELS = {
  compat: "embed-compat",
  "azure-v1": "embed-azure",
  gemini: "embed-gemini",
  bedrock: "amazon.titan-embed-text-v2:0",
} as const;

const PRICING = { prompt: "0.000001", completion: "0.000002" };

export async function startKindsGateway(): Promise<InferenceGateway> {
  const upstream: MockUpstream = await startMockUpstream();
  const key = MOCK_UPSTREAM_API_KEY;
  const providers = [
    { slug: "openai-native", kind: "openai", base_url: upstream.openaiBaseUrl, api_key: key, responses_api: true },
    { slug: "compat", kind: "openai", base_url: upstream.openaiBaseUrl, api_key: key },
    { slug: "azure-v1", kind: "azure", base_url: upstream.azureBaseUrl, api_key: key, api_version: "v1" },
    { slug: "azure-dated", kind: "azure", base_url: upstream.azureBaseUrl, api_key: key, api_version: "2024-10-21" },
    { slug: "anthropic", kind: "anthropic", base_url: upstream.anthropicBaseUrl, api_key: key },
    { slug: "gemini", kind: "google", base_url: upstream.googleBaseUrl, api_key: key },
    { slug: "bedrock", kind: "bedrock", base_url: upstream.bedrockBaseUrl, api_key: key },
  ];
  const models = [
    ...KIND_SLUGS.map((slug) => ({
      id: `k/${slug}`,
      name: slug,
      context_length: 32_000,
      endpoints: [{ provider: slug, upstream_model_id: KIND_MODELS[slug], pricing: PRICING }],
    })),
    {
      id: "k/both",
      name: "both",
      context_length: 32_000,
      endpoints: [
        { provider: "openai-native", upstream_model_id: KIND_MODELS["openai-native"], pricing: PRICING },
        {
          provider: "compat",
          upstream_model_id: KIND_MODELS.compat,
          pricing: { prompt: "0.000002", completion: "0.000004" },
        },
      ],
    },
    ...Object.entries(EMBEDDING_MODELS).map(([slug, upstreamId]) => ({
      id: `e/${slug}`,
      name: `embeddings ${slug}`,
      context_length: 8_000,
      output_modalities: ["embeddings"],
      endpoints: [{ provider: slug, upstream_model_id: upstreamId, pricing: { prompt: "0.0000001", completion: "0" } }],
    })),
  ];
  const configFile = await writeCatalogFile({ providers, models });
  const gw = await startTestGateway({ GATEWAY_CONFIG: configFile });
  return {
    gw,
    upstream,
    configFile,
    async stop() {
      await gw.stop();
      await upstream.close();
    },
  };
}

/** The one upstream request the call made. */
export function onlyRequest(upstream: MockUpstream): RecordedUpstreamRequest {
  if (upstream.requests.length !== 1)
    throw new Error(`expected one upstream request, got ${upstream.requests.map((r) => r.path).join(", ") || "none"}`);
  return upstream.requests[0]!;
}
