import { startMockUpstream, type MockUpstream } from "../upstream/mock-upstream.js";
import { writeCatalogFile } from "./catalog-file.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import type { Logger } from "../../server/platform/logger.js";

/**
 * A test gateway whose catalog points at our mock upstream:
 * - `mock/chat` on providers `mockai` (upstream `chat-a`, cheapest), `backup` (`chat-b`) and
 *   `mockanthropic` (`claude-x`, Anthropic wire format), all three OpenAI-compatible or Anthropic
 *   deployments of the same mock server, so rules on an upstream model id steer one endpoint;
 * - `mock/claude` on `mockanthropic` only (`claude-only`), in the `europe` region with ZDR;
 * - `mock/embed` (embeddings) on `mockai` (`embed-a`);
 * - `mock/free` (all prices zero) on `mockai` (`free-a`);
 * - `mock/byok` on provider slug `openai` (`byok-a`), whose configured key the mock refuses: it
 *   only works with a workspace's own (BYOK) key.
 * Prices per token: chat-a 0.000001 / 0.000002, chat-b 0.000003 / 0.000004, claude 0.000005 / 0.00001.
 */
export interface InferenceGateway {
  gw: TestGateway;
  upstream: MockUpstream;
  /** The GATEWAY_CONFIG file, for more instances on the same database. */
  configFile: string;
  stop(): Promise<void>;
}

export const PRICES = {
  "chat-a": { prompt: "0.000001", completion: "0.000002" },
  "chat-b": { prompt: "0.000003", completion: "0.000004" },
  "claude-x": { prompt: "0.000005", completion: "0.00001" },
} as const;

export async function startInferenceGateway(
  env: Record<string, string> = {},
  options: { nativeBatches?: string[]; log?: Logger } = {},
): Promise<InferenceGateway> {
  const upstream = await startMockUpstream();
  const declared = [
    {
      slug: "mockai",
      name: "MockAI",
      kind: "openai",
      base_url: upstream.openaiBaseUrl,
      api_key: "${MOCK_UPSTREAM_KEY}",
      region: "us",
      timeout_ms: 2000,
    },
    {
      slug: "backup",
      name: "Backup",
      kind: "openai",
      base_url: upstream.openaiBaseUrl,
      api_key: upstream.apiKey,
      region: "global",
      zdr: true,
      timeout_ms: 2000,
    },
    {
      slug: "openai",
      name: "OpenAI",
      kind: "openai",
      base_url: upstream.openaiBaseUrl,
      api_key: "not-the-mock-key",
      timeout_ms: 2000,
    },
    {
      slug: "mockanthropic",
      name: "MockAnthropic",
      kind: "anthropic",
      base_url: upstream.anthropicBaseUrl,
      api_key: upstream.apiKey,
      region: "europe",
      zdr: true,
      timeout_ms: 2000,
    },
  ];
  // `options.nativeBatches`: these providers run batches through their own batch API.
  const providers = declared.map((p) => (options.nativeBatches?.includes(p.slug) ? { ...p, native_batches: true } : p));
  const models = [
    {
      id: "mock/chat",
      name: "Mock: Chat",
      created: 1_700_000_000,
      context_length: 32_000,
      endpoints: [
        { provider: "mockai", upstream_model_id: "chat-a", pricing: PRICES["chat-a"], max_completion_tokens: 1000 },
        { provider: "backup", upstream_model_id: "chat-b", pricing: PRICES["chat-b"], max_completion_tokens: 1000 },
        {
          provider: "mockanthropic",
          upstream_model_id: "claude-x",
          pricing: PRICES["claude-x"],
          max_completion_tokens: 1000,
        },
      ],
    },
    {
      id: "mock/claude",
      name: "Mock: Claude",
      created: 1_700_000_000,
      context_length: 200_000,
      endpoints: [
        {
          provider: "mockanthropic",
          upstream_model_id: "claude-only",
          pricing: PRICES["claude-x"],
          max_completion_tokens: 1000,
        },
      ],
    },
    {
      id: "mock/embed",
      name: "Mock: Embed",
      created: 1_700_000_000,
      context_length: 8_000,
      output_modalities: ["embeddings"],
      endpoints: [
        { provider: "mockai", upstream_model_id: "embed-a", pricing: { prompt: "0.0000001", completion: "0" } },
      ],
    },
    {
      id: "mock/free",
      name: "Mock: Free",
      created: 1_700_000_000,
      context_length: 8_000,
      endpoints: [{ provider: "mockai", upstream_model_id: "free-a", pricing: { prompt: "0", completion: "0" } }],
    },
    {
      id: "mock/byok",
      name: "Mock: BYOK",
      created: 1_700_000_000,
      context_length: 8_000,
      endpoints: [{ provider: "openai", upstream_model_id: "byok-a", pricing: PRICES["chat-a"] }],
    },
  ];
  const file = await writeCatalogFile({ providers, models, regional_hosts: { "eu.gateway.test": "europe" } });
  process.env.MOCK_UPSTREAM_KEY = upstream.apiKey;
  const gw = await startTestGateway({ GATEWAY_CONFIG: file, ...env }, {}, options.log);
  return {
    gw,
    upstream,
    configFile: file,
    async stop() {
      await gw.stop();
      await upstream.close();
    },
  };
}
