import * as assert from "uvu/assert";
import { syncCatalog } from "../../../server/engine/catalog/catalog-sync.js";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { at } from "../../support/http.js";
import { assertError, byId, CONFIG, get, ids, type Json, modelsSuite, TEXT_MODELS } from "./models-fixture.js";

/** GET /models: the public catalog, its fields, filters and pages, and the catalog sync behind it. */
const test = modelsSuite("models api: the public list");

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

test.run();
