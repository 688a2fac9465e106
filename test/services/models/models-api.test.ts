import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { syncCatalog } from "../../../server/engine/catalog/catalog-sync.js";
import { createEndpointStatsCache, NO_STATS } from "../../../server/engine/catalog/endpoint-stats.js";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { PrivateEndpointRow } from "../../../server/platform/db/governance-models.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, rawRequest, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";

type Json = Record<string, unknown>;

interface Ctx {
  gw: TestGateway;
  configFile: string;
  before: number;
}

const test = suite<Ctx>("models api");

const price = (prompt: string, completion: string) => ({ prompt, completion });

const CONFIG = {
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

const TEXT_MODELS = ["openai/gpt-4o", "anthropic/claude-sonnet", "meta-llama/llama-free", "google/gemini-image"];
const MODEL_FIELDS = [
  "id",
  "canonical_slug",
  "name",
  "description",
  "created",
  "context_length",
  "architecture",
  "pricing",
  "top_provider",
  "supported_parameters",
  "supported_voices",
  "default_parameters",
  "per_request_limits",
  "expiration_date",
  "knowledge_cutoff",
  "links",
];
const ENDPOINT_FIELDS = [
  "name",
  "model_id",
  "model_name",
  "provider_name",
  "tag",
  "context_length",
  "max_completion_tokens",
  "max_prompt_tokens",
  "quantization",
  "status",
  "pricing",
  "supported_parameters",
  "supports_implicit_caching",
  "latency_last_30m",
  "throughput_last_30m",
  "uptime_last_5m",
  "uptime_last_30m",
  "uptime_last_1d",
];

test.before(async (ctx) => {
  ctx.before = Math.floor(Date.now() / 1000);
  ctx.configFile = await writeCatalogFile(CONFIG);
  process.env.MODELS_TEST_KEY = "sk-models-test-secret";
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: ctx.configFile });
});
test.after(async (ctx) => {
  await ctx.gw.stop();
  delete process.env.MODELS_TEST_KEY;
});

const get = (gw: TestGateway, path: string, key?: string) => call(gw.url, "GET", path, key ? { key } : {});
const ids = (res: Reply) => {
  assert.is(res.status, 200, res.text);
  return (at(res.body, "data") as Json[]).map((m) => m.id);
};
const byId = (res: Reply, id: string) => (at(res.body, "data") as Json[]).find((m) => m.id === id) as Json;

function assertError(res: { status: number; body: unknown }, status: number, message?: RegExp): void {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.is(at(res.body, "error", "code"), status);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}

async function newKey(gw: TestGateway, name: string): Promise<{ secret: string; hash: string }> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name } });
  assert.is(res.status, 201, res.text);
  return { secret: at(res.body, "key") as string, hash: at(res.body, "data", "hash") as string };
}

/** A fresh key governed by one guardrail with the given policy fields. */
async function keyWithGuardrail(gw: TestGateway, policy: Json): Promise<string> {
  const key = await newKey(gw, `governed ${JSON.stringify(policy)}`.slice(0, 100));
  const created = await call(gw.url, "POST", "/api/v1/guardrails", {
    key: gw.key,
    body: { name: `policy ${key.hash.slice(0, 8)}`, ...policy },
  });
  assert.is(created.status, 201, created.text);
  const assigned = await call(gw.url, "POST", `/api/v1/guardrails/${at(created.body, "data", "id")}/assignments/keys`, {
    key: gw.key,
    body: { key_hashes: [key.hash] },
  });
  assert.is(assigned.status, 200, assigned.text);
  return key.secret;
}

// ---------------------------------------------------------------------------------------------
// GET /models
// ---------------------------------------------------------------------------------------------

test("GET /models: the public catalog of text models in config order, every field of 2.14", async ({ gw }) => {
  const res = await get(gw, "/api/v1/models");
  assert.equal(ids(res), TEXT_MODELS);
  assert.equal(Object.keys(res.body as object).sort(), ["data", "links", "total_count"]);
  assert.is(at(res.body, "total_count"), 4);
  assert.equal(at(res.body, "links"), { next: null });
  const gpt = byId(res, "openai/gpt-4o");
  assert.equal(Object.keys(gpt).sort(), [...MODEL_FIELDS].sort());
  assert.equal(gpt, {
    id: "openai/gpt-4o",
    canonical_slug: "openai/gpt-4o-2024-08-06",
    name: "GPT-4o",
    description: "Omni model",
    created: Date.UTC(2024, 7, 6) / 1000,
    context_length: 128000,
    architecture: {
      input_modalities: ["text", "image"],
      output_modalities: ["text"],
      modality: "text+image->text",
      tokenizer: "GPT",
      instruct_type: null,
    },
    // The cheapest endpoint's prices (azure-eu), exactly as configured.
    pricing: { prompt: "0.000002", completion: "0.000008", image: "0", request: "0.0001" },
    // Limits of the first endpoint.
    top_provider: { context_length: 128000, max_completion_tokens: 16384, is_moderated: false },
    supported_parameters: [
      "temperature",
      "top_p",
      "max_tokens",
      "stop",
      "frequency_penalty",
      "presence_penalty",
      "seed",
      "logit_bias",
      "logprobs",
      "top_logprobs",
      "response_format",
      "tools",
      "tool_choice",
      "parallel_tool_calls",
      "web_search_options",
    ],
    supported_voices: null,
    default_parameters: { temperature: 1 },
    per_request_limits: null,
    expiration_date: null,
    knowledge_cutoff: "2023-10",
    links: { details: "/api/v1/models/openai/gpt-4o/endpoints" },
  });
  const claude = byId(res, "anthropic/claude-sonnet");
  assert.is(claude.canonical_slug, "anthropic/claude-sonnet", "canonical slug defaults to the id");
  assert.equal(claude.supported_parameters, [
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "stop",
    "tools",
    "tool_choice",
    "reasoning",
  ]);
});

test("GET /models: a model without `created` keeps the time its row was first written, across syncs", async (ctx) => {
  const first = byId(await get(ctx.gw, "/api/v1/models"), "anthropic/claude-sonnet").created as number;
  assert.ok(first >= ctx.before - 5 && first <= Math.floor(Date.now() / 1000) + 5, String(first));
  const reloaded = await loadCatalogFile(ctx.configFile, process.env);
  assert.is(reloaded.models.get("anthropic/claude-sonnet")!.created, 0, "not configured");
  await syncCatalog(ctx.gw.gateway.sequelize, reloaded);
  assert.is(reloaded.models.get("anthropic/claude-sonnet")!.created, first, "a second sync keeps the first time");
  assert.is(reloaded.models.get("openai/gpt-4o")!.created, Date.UTC(2024, 7, 6) / 1000);
});

test("catalog sync: rows the config drops stay, unlisted; API keys are never stored", async ({ gw, configFile }) => {
  const sequelize = gw.gateway.sequelize;
  const [columns] = await sequelize.query(
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'providers'",
  );
  assert.not.ok(
    (columns as Json[]).some((c) => String(c.column_name).includes("key")),
    "no key column",
  );
  const [stored] = await sequelize.query("SELECT * FROM providers");
  assert.not.ok(JSON.stringify(stored).includes("sk-models-test-secret"));

  const smaller = await loadCatalogFile(
    await writeCatalogFile({ ...CONFIG, providers: CONFIG.providers.slice(0, 3), models: CONFIG.models.slice(0, 1) }),
    process.env,
  );
  await syncCatalog(sequelize, smaller);
  const [models] = await sequelize.query("SELECT id, listed FROM catalog_models ORDER BY id");
  assert.equal(models, [
    { id: "anthropic/claude-sonnet", listed: false },
    { id: "google/gemini-image", listed: false },
    { id: "meta-llama/llama-free", listed: false },
    { id: "openai/gpt-4o", listed: true },
    { id: "openai/text-embedding-3-small", listed: false },
  ]);
  const [endpoints] = await sequelize.query(
    "SELECT id, listed, price_prompt, region, zdr FROM catalog_endpoints WHERE listed ORDER BY id",
  );
  assert.equal(endpoints, [
    { id: "openai/gpt-4o@azure-eu", listed: true, price_prompt: "0.000002", region: "europe", zdr: true },
    { id: "openai/gpt-4o@openai", listed: true, price_prompt: "0.0000025", region: "global", zdr: false },
  ]);
  const [providers] = await sequelize.query("SELECT slug, listed FROM providers WHERE NOT listed");
  assert.equal(providers, [{ slug: "collector", listed: false }]);

  await syncCatalog(sequelize, await loadCatalogFile(configFile, process.env));
  const [relisted] = await sequelize.query("SELECT count(*)::int AS n FROM catalog_models WHERE listed");
  assert.equal(relisted, [{ n: 5 }]);
});

test("GET /models: output_modalities filters by intersection; `all` lists everything; bad values are 400", async ({
  gw,
}) => {
  assert.equal(ids(await get(gw, "/api/v1/models?output_modalities=embeddings")), ["openai/text-embedding-3-small"]);
  assert.equal(ids(await get(gw, "/api/v1/models?output_modalities=image")), ["google/gemini-image"]);
  assert.equal(ids(await get(gw, "/api/v1/models?output_modalities=embeddings,image")), [
    "openai/text-embedding-3-small",
    "google/gemini-image",
  ]);
  assert.equal(ids(await get(gw, "/api/v1/models?output_modalities=all")), [
    "openai/gpt-4o",
    "anthropic/claude-sonnet",
    "openai/text-embedding-3-small",
    "meta-llama/llama-free",
    "google/gemini-image",
  ]);
  assert.equal(ids(await get(gw, "/api/v1/models?output_modalities=audio")), []);
  const embeddings = byId(
    await get(gw, "/api/v1/models?output_modalities=embeddings"),
    "openai/text-embedding-3-small",
  );
  assert.equal(embeddings.supported_parameters, ["dimensions", "input_type", "encoding_format"]);
  assert.is(embeddings.created, 1_700_000_000);
  for (const bad of ["smell", "text,", "TEXT", ""]) {
    assertError(await get(gw, `/api/v1/models?output_modalities=${bad}`), 400, /output_modalities/);
  }
});

test("GET /models and /models/user: offset/limit pages with links.next; limits 1..1000", async ({ gw }) => {
  for (const path of ["/api/v1/models", "/api/v1/models/user"]) {
    const first = await get(gw, `${path}?limit=3`, gw.key);
    assert.equal(ids(first), TEXT_MODELS.slice(0, 3));
    assert.is(at(first.body, "total_count"), 4);
    const next = at(first.body, "links", "next") as string;
    assert.is(next, `${path}?offset=3&limit=3`);
    const second = await get(gw, next, gw.key);
    assert.equal(ids(second), TEXT_MODELS.slice(3));
    assert.equal(at(second.body, "links"), { next: null });
    assert.is(at(second.body, "total_count"), 4);

    assert.equal(ids(await get(gw, `${path}?offset=1`, gw.key)), TEXT_MODELS.slice(1), "offset alone: the rest");
    assert.equal(ids(await get(gw, `${path}?offset=10&limit=5`, gw.key)), []);
    const withModalities = await get(gw, `${path}?limit=1&output_modalities=all`, gw.key);
    assert.is(at(withModalities.body, "links", "next"), `${path}?offset=1&limit=1&output_modalities=all`);
    assert.is(at(withModalities.body, "total_count"), 5);
    assert.equal(ids(await get(gw, `${path}?limit=1000`, gw.key)), TEXT_MODELS);

    for (const query of ["limit=1001", "limit=0", "offset=-1", "limit=abc"]) {
      assertError(await get(gw, `${path}?${query}`, gw.key), 400);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// GET /models/user
// ---------------------------------------------------------------------------------------------

test("GET /models/user: 401 without a valid key; without guardrails the same list as the public one", async ({
  gw,
}) => {
  assertError(await get(gw, "/api/v1/models/user"), 401);
  assertError(await get(gw, "/api/v1/models/user", "sk-not-a-key"), 401);
  const plain = await newKey(gw, "plain models key");
  const user = await get(gw, "/api/v1/models/user", plain.secret);
  assert.equal(user.body, (await get(gw, "/api/v1/models")).body);
});

test("GET /models/user: allowed_models (by id or canonical slug) and ignored_models", async ({ gw }) => {
  const allowed = await keyWithGuardrail(gw, {
    allowed_models: ["openai/gpt-4o-2024-08-06", "anthropic/claude-sonnet"],
  });
  assert.equal(ids(await get(gw, "/api/v1/models/user", allowed)), ["openai/gpt-4o", "anthropic/claude-sonnet"]);
  const ignored = await keyWithGuardrail(gw, { ignored_models: ["openai/gpt-4o", "google/gemini-image"] });
  assert.equal(ids(await get(gw, "/api/v1/models/user", ignored)), ["anthropic/claude-sonnet"]);
});

test("GET /models/user: allowed/ignored providers leave models with a surviving endpoint, summarized over those", async ({
  gw,
}) => {
  const onlyAnthropic = await keyWithGuardrail(gw, { allowed_providers: ["anthropic"] });
  assert.equal(ids(await get(gw, "/api/v1/models/user", onlyAnthropic)), ["anthropic/claude-sonnet"]);

  const noEu = await keyWithGuardrail(gw, {
    ignored_providers: ["azure-eu", "anthropic"],
    enable_free_model_training: true,
  });
  const res = await get(gw, "/api/v1/models/user", noEu);
  assert.equal(ids(res), ["openai/gpt-4o", "meta-llama/llama-free", "google/gemini-image"]);
  const gpt = byId(res, "openai/gpt-4o");
  assert.equal(
    gpt.pricing,
    { prompt: "0.0000025", completion: "0.00001", image: "0", request: "0" },
    "priced by the surviving endpoint",
  );
  assert.ok(
    !(gpt.supported_parameters as string[]).includes("web_search_options"),
    "parameters of surviving endpoints only",
  );
});

test("GET /models/user: allowed_data_regions keeps in-region endpoints only", async ({ gw }) => {
  const eu = await keyWithGuardrail(gw, { allowed_data_regions: ["europe"] });
  const res = await get(gw, "/api/v1/models/user", eu);
  assert.equal(ids(res), ["openai/gpt-4o"]);
  const gpt = byId(res, "openai/gpt-4o");
  assert.equal(
    gpt.top_provider,
    { context_length: 64000, max_completion_tokens: null, is_moderated: false },
    "the EU endpoint's limits",
  );
  assert.equal(gpt.supported_parameters, ["temperature", "web_search_options"]);
});

test("GET /models/user: enforce_zdr, with a per-author flag overriding it", async ({ gw }) => {
  const zdr = await keyWithGuardrail(gw, { enforce_zdr: true });
  assert.equal(ids(await get(gw, "/api/v1/models/user", zdr)), ["openai/gpt-4o"]);
  const exemptAnthropic = await keyWithGuardrail(gw, { enforce_zdr: true, enforce_zdr_anthropic: false });
  assert.equal(ids(await get(gw, "/api/v1/models/user", exemptAnthropic)), [
    "openai/gpt-4o",
    "anthropic/claude-sonnet",
  ]);
  const openaiOnly = await keyWithGuardrail(gw, { enforce_zdr_openai: true, enable_free_model_training: true });
  const res = await get(gw, "/api/v1/models/user", openaiOnly);
  assert.equal(
    ids(res),
    ["openai/gpt-4o", "anthropic/claude-sonnet", "meta-llama/llama-free", "google/gemini-image"],
    "google is not openai",
  );
  assert.equal(byId(res, "openai/gpt-4o").pricing, {
    prompt: "0.000002",
    completion: "0.000008",
    image: "0",
    request: "0.0001",
  });
});

test("GET /models/user: a guardrail hides endpoints that may train on prompts unless it enables training", async ({
  gw,
}) => {
  const defaults = await keyWithGuardrail(gw, { description: "defaults only" });
  assert.equal(ids(await get(gw, "/api/v1/models/user", defaults)), [
    "openai/gpt-4o",
    "anthropic/claude-sonnet",
    "google/gemini-image",
  ]);
  const paidOnly = await keyWithGuardrail(gw, { enable_paid_model_training: true });
  assert.not.ok(
    ids(await get(gw, "/api/v1/models/user", paidOnly)).includes("meta-llama/llama-free"),
    "the free endpoint needs the free switch",
  );
});

test("regional host name: only endpoints of its region, for /models and /models/user, port and case ignored", async ({
  gw,
}) => {
  for (const host of ["eu.example.test", "EU.Example.Test:8080"]) {
    const user = await rawRequest(gw.url, "GET", "/api/v1/models/user", { key: gw.key, headers: { host } });
    assert.is(user.status, 200);
    assert.equal(
      (at(user.body, "data") as Json[]).map((m) => m.id),
      ["openai/gpt-4o"],
    );
    assert.equal(at(user.body, "data", 0, "pricing"), {
      prompt: "0.000002",
      completion: "0.000008",
      image: "0",
      request: "0.0001",
    });
    const open = await rawRequest(gw.url, "GET", "/api/v1/models?output_modalities=all", { headers: { host } });
    assert.equal(
      (at(open.body, "data") as Json[]).map((m) => m.id),
      ["openai/gpt-4o"],
    );
  }
  const elsewhere = await rawRequest(gw.url, "GET", "/api/v1/models", { headers: { host: "www.example.test" } });
  assert.equal(
    (at(elsewhere.body, "data") as Json[]).map((m) => m.id),
    TEXT_MODELS,
  );
});

test("filtered catalog: with is_filtered_model_catalog_enabled, GET /models shows a key what it may use", async ({
  gw,
}) => {
  const governed = await keyWithGuardrail(gw, { allowed_models: ["anthropic/claude-sonnet"] });
  assert.equal(ids(await get(gw, "/api/v1/models", governed)), TEXT_MODELS, "off: the public catalog");
  const on = await call(gw.url, "PATCH", "/api/v1/organization/settings", {
    key: gw.key,
    body: { is_filtered_model_catalog_enabled: true },
  });
  assert.is(on.status, 200, on.text);
  try {
    assert.equal(ids(await get(gw, "/api/v1/models", governed)), ["anthropic/claude-sonnet"]);
    assert.equal(ids(await get(gw, "/api/v1/models")), TEXT_MODELS, "anonymous callers always get the public catalog");
    assert.equal(ids(await get(gw, "/api/v1/models", gw.key)), TEXT_MODELS, "an unrestricted key sees everything");
  } finally {
    const off = await call(gw.url, "PATCH", "/api/v1/organization/settings", {
      key: gw.key,
      body: { is_filtered_model_catalog_enabled: false },
    });
    assert.is(off.status, 200, off.text);
  }
});

test("private endpoints: an organization's active ones count for its lists and pricing; drafts and other organizations' do not", async ({
  gw,
}) => {
  const org = await seedOrganization("models-private");
  const base = {
    organizationId: org.organizationId,
    modelPermaslug: "anthropic/claude-sonnet",
    modelSlug: "anthropic/claude-sonnet",
    modelName: "Claude Sonnet",
    providerSlug: "anthropic",
    providerName: "Anthropic",
    upstreamModelId: "claude-private",
    baseUrl: "https://private.example",
    declaredRegion: "europe",
    declaredZdr: true,
    pricingPrompt: "0.000001",
    pricingCompletion: "0.000002",
    status: "active",
  };
  const active = await PrivateEndpointRow.create(base);
  await PrivateEndpointRow.create({
    ...base,
    modelPermaslug: "google/gemini-image",
    modelSlug: "google/gemini-image",
    status: "draft",
  });

  const own = await get(gw, "/api/v1/models/user", org.key);
  assert.equal(byId(own, "anthropic/claude-sonnet").pricing, {
    prompt: "0.000001",
    completion: "0.000002",
    image: "0",
    request: "0",
  });
  const ownEu = await rawRequest(gw.url, "GET", "/api/v1/models/user", {
    key: org.key,
    headers: { host: "eu.example.test" },
  });
  assert.equal(
    (at(ownEu.body, "data") as Json[]).map((m) => m.id),
    ["openai/gpt-4o", "anthropic/claude-sonnet"],
    "the private endpoint is in europe",
  );
  const otherEu = await rawRequest(gw.url, "GET", "/api/v1/models/user", {
    key: gw.key,
    headers: { host: "eu.example.test" },
  });
  assert.equal(
    (at(otherEu.body, "data") as Json[]).map((m) => m.id),
    ["openai/gpt-4o"],
    "not another organization's",
  );
  assert.equal(
    byId(await get(gw, "/api/v1/models"), "anthropic/claude-sonnet").pricing,
    { prompt: "0.000003", completion: "0.000015", image: "0", request: "0" },
    "the public catalog has none",
  );

  const withKey = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints", org.key);
  assert.is(withKey.status, 200, withKey.text);
  const endpoints = at(withKey.body, "data", "endpoints") as Json[];
  assert.equal(
    endpoints.map((e) => e.name),
    ["Anthropic | anthropic/claude-sonnet", "Anthropic | anthropic/claude-sonnet"],
  );
  assert.equal(endpoints[1]!.pricing, { prompt: "0.000001", completion: "0.000002", image: "0", request: "0" });
  assert.is(endpoints[1]!.context_length, 200000, "the catalog model's context length");
  const anonymous = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints");
  assert.is((at(anonymous.body, "data", "endpoints") as Json[]).length, 1);
  const others = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints", gw.key);
  assert.is((at(others.body, "data", "endpoints") as Json[]).length, 1);
  await active.destroy();
});

/** A ledger row as the usage recorder writes it, `age` before now. */
async function recordCall(
  gw: TestGateway,
  endpoint: string,
  age: string,
  status: string,
  httpStatus: number,
  latency: number | null,
  generation: number | null,
  tokens: number,
) {
  await gw.gateway.sequelize.query(
    `INSERT INTO usage_ledger (id, generation_id, created_at, organization_id, key_hash, workspace_id, api, model_id, provider_slug,
                               endpoint_id, status, http_status, completion_tokens, latency_ms, generation_ms)
     VALUES (gen_random_uuid(), 'gen-test', now() - CAST(:age AS interval), gen_random_uuid(), repeat('a', 64), gen_random_uuid(), 'chat',
             'openai/gpt-4o', 'openai', :endpoint, :status, :httpStatus, :tokens, :latency, :generation)`,
    { replacements: { age, endpoint, status, httpStatus, tokens, latency, generation } },
  );
}

// ---------------------------------------------------------------------------------------------
// GET /models/{author}/{slug}/endpoints
// ---------------------------------------------------------------------------------------------

test("GET /models/{author}/{slug}/endpoints: the model and its endpoints, without stats before any call", async ({
  gw,
}) => {
  const res = await get(gw, "/api/v1/models/openai/gpt-4o/endpoints");
  assert.is(res.status, 200, res.text);
  const data = at(res.body, "data") as Json;
  assert.equal(Object.keys(data).sort(), ["architecture", "created", "description", "endpoints", "id", "name"]);
  assert.equal(
    [data.id, data.name, data.created, data.description],
    ["openai/gpt-4o", "GPT-4o", Date.UTC(2024, 7, 6) / 1000, "Omni model"],
  );
  assert.is(at(data, "architecture", "modality"), "text+image->text");
  const [openai, eu] = data.endpoints as Json[];
  assert.equal(Object.keys(openai!).sort(), [...ENDPOINT_FIELDS].sort());
  assert.equal(eu, {
    name: "Azure EU | openai/gpt-4o",
    model_id: "openai/gpt-4o",
    model_name: "GPT-4o",
    provider_name: "Azure EU",
    tag: "azure-eu",
    context_length: 64000,
    max_completion_tokens: null,
    max_prompt_tokens: null,
    quantization: "fp8",
    status: 0,
    pricing: { prompt: "0.000002", completion: "0.000008", image: "0", request: "0.0001" },
    supported_parameters: ["temperature", "web_search_options"],
    supports_implicit_caching: false,
    latency_last_30m: null,
    throughput_last_30m: null,
    uptime_last_5m: null,
    uptime_last_30m: null,
    uptime_last_1d: null,
  });
  assert.is(openai!.max_completion_tokens, 16384);
  const byCanonical = await get(gw, "/api/v1/models/openai/gpt-4o-2024-08-06/endpoints");
  assert.is(at(byCanonical.body, "data", "id"), "openai/gpt-4o", "the canonical slug finds the model too");
});

test("GET /models/{author}/{slug}/endpoints: 404 for an unknown model", async ({ gw }) => {
  assertError(await get(gw, "/api/v1/models/openai/gpt-9/endpoints"), 404, /openai\/gpt-9/);
  assertError(await get(gw, "/api/v1/models/nobody/nothing/endpoints", gw.key), 404);
});

test("endpoint stats cache: first ids load at once; known ids answer from memory and refresh after the ttl", async ({
  gw,
}) => {
  const endpoint = "cache/model@cache";
  const other = "cache/other@cache";
  await recordCall(gw, endpoint, "1 minute", "success", 200, 100, 1100, 10);
  const sequelize = gw.gateway.sequelize;

  const lasting = createEndpointStatsCache(sequelize, 3_600_000);
  assert.is((await lasting.get([endpoint])).get(endpoint)!.uptimeLast5m, 100, "the first get waits for the load");
  await recordCall(gw, endpoint, "1 minute", "error", 502, null, null, 0);
  assert.is((await lasting.get([endpoint])).get(endpoint)!.uptimeLast5m, 100, "within the ttl: from memory");
  assert.equal(lasting.peek([other]).get(other), NO_STATS, "peek never waits");

  const expiring = createEndpointStatsCache(sequelize, 0);
  assert.is((await expiring.get([endpoint])).get(endpoint)!.uptimeLast5m, 50);
  await recordCall(gw, endpoint, "1 minute", "error", 502, null, null, 0);
  assert.is(
    (await expiring.get([endpoint])).get(endpoint)!.uptimeLast5m,
    50,
    "stale data answers at once while a refresh starts",
  );
  // A new id waits for the refresh in flight, then loads with every known id.
  const both = await expiring.get([endpoint, other]);
  assert.is(both.get(endpoint)!.uptimeLast5m, 33.33);
  assert.equal(both.get(other), NO_STATS);
});

test.run();

/**
 * Stats from recorded calls, on a gateway of its own: the calls it records would show in the
 * answers of the suite above, whose endpoints have no stats before any call, whichever test ran first.
 */
const stats = suite<Ctx>("models api: endpoint stats");
stats.before(async (ctx) => {
  ctx.configFile = await writeCatalogFile(CONFIG);
  process.env.MODELS_TEST_KEY = "sk-models-test-secret";
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: ctx.configFile });
});
stats.after(async (ctx) => {
  await ctx.gw?.stop();
  delete process.env.MODELS_TEST_KEY;
});

stats("endpoint stats: percentiles and uptime from the recorded calls in usage_ledger", async ({ gw }) => {
  const rows: Array<[string, string, string, number, number | null, number | null, number]> = [
    // endpoint, age, status, http_status, latency_ms, generation_ms, completion_tokens
    ["openai/gpt-4o@openai", "1 minute", "success", 200, 100, 1100, 100],
    ["openai/gpt-4o@openai", "1 minute", "success", 200, 200, 1200, 200],
    ["openai/gpt-4o@openai", "1 minute", "success", 200, 300, 1300, 300],
    ["openai/gpt-4o@openai", "1 minute", "success", 200, 400, 1400, 400],
    ["openai/gpt-4o@openai", "1 minute", "success", 200, 500, 500, 0], // latency only: no tokens
    ["openai/gpt-4o@openai", "2 minutes", "error", 502, null, null, 0], // down
    ["openai/gpt-4o@openai", "2 minutes", "error", 400, null, null, 0], // the client's fault: not counted
    ["openai/gpt-4o@openai", "2 minutes", "error", 429, null, null, 0], // not counted
    ["openai/gpt-4o@openai", "2 minutes", "cancelled", 499, 50, null, 0], // not counted
    ["openai/gpt-4o@openai", "10 minutes", "error", 503, null, null, 0], // down, 30m and 1d
    ["openai/gpt-4o@openai", "2 hours", "success", 200, 9000, 10000, 10], // 1d only
    ["openai/gpt-4o@openai", "2 days", "error", 500, null, null, 0], // too old
    ["openai/gpt-4o@azure-eu", "1 minute", "error", 503, null, null, 0],
    ["openai/gpt-4o@azure-eu", "3 minutes", "error", 500, null, null, 0],
    ["anthropic/claude-sonnet@anthropic", "1 minute", "success", 200, 100, 200, 5],
  ];
  for (const row of rows) await recordCall(gw, ...row);
  const res = await get(gw, "/api/v1/models/openai/gpt-4o/endpoints");
  assert.is(res.status, 200, res.text);
  const [openai, eu] = at(res.body, "data", "endpoints") as Json[];
  // percentile_cont interpolates: latencies 100..500 → p50 300, p75 400, p90 460, p99 496.
  assert.equal(openai!.latency_last_30m, { p50: 300, p75: 400, p90: 460, p99: 496 });
  // Throughput = tokens / (generation - latency) s: 100, 200, 300, 400 tokens/s.
  assert.equal(openai!.throughput_last_30m, { p50: 250, p75: 325, p90: 370, p99: 397 });
  assert.is(openai!.uptime_last_5m, 83.33, "5 up, 1 down");
  assert.is(openai!.uptime_last_30m, 71.43, "5 up, 2 down");
  assert.is(openai!.uptime_last_1d, 75, "6 up, 2 down");
  assert.is(openai!.status, -1, "degraded: under 90% over 30 minutes");
  assert.equal(
    [eu!.latency_last_30m, eu!.throughput_last_30m, eu!.uptime_last_5m, eu!.uptime_last_1d, eu!.status],
    [null, null, 0, 0, -2],
  );

  const claude = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints");
  assert.equal(at(claude.body, "data", "endpoints", 0, "throughput_last_30m"), { p50: 50, p75: 50, p90: 50, p99: 50 });
  assert.is(at(claude.body, "data", "endpoints", 0, "uptime_last_5m"), 100);
  assert.is(at(claude.body, "data", "endpoints", 0, "status"), 0);
});

stats.run();
