import type { Test } from "uvu";
import * as assert from "uvu/assert";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { suite } from "../../support/suite.js";

export type Json = Record<string, unknown>;

export interface ModelsContext {
  gw: TestGateway;
  configFile: string;
  /** When the suite started, in Unix seconds. */
  before: number;
}

const price = (prompt: string, completion: string) => ({ prompt, completion });

/** The catalog the models suites list: four providers, text, embedding and image models, one regional host. */
export const CONFIG = {
  providers: [
    {
      slug: "openai",
      name: "OpenAI",
      kind: "openai",
      base_url: "https://api.openai.example/v1",
      api_key: "${MODELS_TEST_KEY}",
    },
    {
      slug: "azure-eu",
      name: "Azure EU",
      kind: "openai",
      base_url: "https://eu.azure.example/v1",
      api_key: "k",
      region: "europe",
      zdr: true,
    },
    {
      slug: "anthropic",
      name: "Anthropic",
      kind: "anthropic",
      base_url: "https://api.anthropic.example",
      api_key: "k",
    },
    {
      slug: "collector",
      name: "Collector",
      kind: "openai",
      base_url: "https://free.example/v1",
      api_key: "",
      data_collection: "allow",
    },
  ],
  models: [
    {
      id: "openai/gpt-4o",
      canonical_slug: "openai/gpt-4o-2024-08-06",
      name: "GPT-4o",
      description: "Omni model",
      created: "2024-08-06",
      context_length: 128000,
      input_modalities: ["text", "image"],
      tokenizer: "GPT",
      knowledge_cutoff: "2023-10",
      default_parameters: { temperature: 1 },
      endpoints: [
        {
          provider: "openai",
          upstream_model_id: "gpt-4o",
          pricing: price("0.0000025", "0.00001"),
          max_completion_tokens: 16384,
        },
        {
          provider: "azure-eu",
          upstream_model_id: "gpt-4o-eu",
          pricing: { ...price("0.000002", "0.000008"), request: "0.0001" },
          context_length: 64000,
          supported_parameters: ["temperature", "web_search_options"],
          quantization: "fp8",
        },
      ],
    },
    {
      id: "anthropic/claude-sonnet",
      name: "Claude Sonnet",
      context_length: 200000,
      endpoints: [
        { provider: "anthropic", upstream_model_id: "claude-sonnet-4", pricing: price("0.000003", "0.000015") },
      ],
    },
    {
      id: "openai/text-embedding-3-small",
      name: "Embeddings",
      created: 1_700_000_000,
      context_length: 8191,
      output_modalities: ["embeddings"],
      endpoints: [
        { provider: "openai", upstream_model_id: "text-embedding-3-small", pricing: price("0.00000002", "0") },
      ],
    },
    {
      id: "meta-llama/llama-free",
      name: "Llama (free)",
      created: 1_710_000_000,
      context_length: 8192,
      endpoints: [{ provider: "collector", upstream_model_id: "llama", pricing: price("0", "0") }],
    },
    {
      id: "google/gemini-image",
      name: "Gemini Image",
      created: 1_720_000_000,
      context_length: 32000,
      input_modalities: ["text", "image"],
      output_modalities: ["image", "text"],
      endpoints: [{ provider: "openai", upstream_model_id: "gemini-image", pricing: price("0.0000003", "0.0000025") }],
    },
  ],
  regional_hosts: { "eu.example.test": "europe" },
};

/** The models GET /models lists by default, in the catalog's order. */
export const TEXT_MODELS = ["openai/gpt-4o", "anthropic/claude-sonnet", "meta-llama/llama-free", "google/gemini-image"];

/** A suite of the models API with its own gateway on CONFIG, started before its tests and stopped after. */
export function modelsSuite(title: string): Test<ModelsContext> {
  const test = suite<ModelsContext>(title);
  test.before(async (ctx) => {
    ctx.before = Math.floor(Date.now() / 1000);
    ctx.configFile = await writeCatalogFile(CONFIG);
    process.env.MODELS_TEST_KEY = "sk-models-test-secret";
    ctx.gw = await startTestGateway({ GATEWAY_CONFIG: ctx.configFile });
  });
  test.after(async (ctx) => {
    await ctx.gw?.stop();
    delete process.env.MODELS_TEST_KEY;
  });
  return test;
}

export const get = (gw: TestGateway, path: string, key?: string) => call(gw.url, "GET", path, key ? { key } : {});
export const ids = (res: Reply) => {
  assert.is(res.status, 200, res.text);
  return (at(res.body, "data") as Json[]).map((m) => m.id);
};
export const byId = (res: Reply, id: string) => (at(res.body, "data") as Json[]).find((m) => m.id === id) as Json;

export function assertError(res: { status: number; body: unknown }, status: number, message?: RegExp): void {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.is(at(res.body, "error", "code"), status);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}
