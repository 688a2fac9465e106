import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { sseData } from "../../support/sse.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { QueryTypes } from "sequelize";
import { FAST_ENGINE, submit, waitTerminal } from "../../support/batches.js";

/**
 * Prompt caching priced as providers price it: cache reads and writes at the endpoint's
 * `input_cache_read` / `input_cache_write`, the rest of the prompt at `prompt`, from the usage of
 * both upstream kinds (OpenAI-compatible `prompt_tokens_details`, Anthropic's cache counts), plain
 * and streamed, into the answer, the ledger and GET /key.
 */
interface Ctx {
  gw: TestGateway;
  upstream: MockUpstream;
}
const test = suite<Ctx>("prompt cache pricing");

const CACHE_PRICES = {
  prompt: "0.000003",
  completion: "0.000015",
  input_cache_read: "0.0000003",
  input_cache_write: "0.00000375",
};
const PLAIN_PRICES = { prompt: "0.000003", completion: "0.000015" };

/** 1000 prompt tokens: 600 read from the cache, 200 written to it, 200 neither; 100 completion tokens. */
const USAGE = { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 600, cache_write_tokens: 200 };
// By hand: 200 × 0.000003 + 600 × 0.0000003 + 200 × 0.00000375 = 0.0006 + 0.00018 + 0.00075.
const PROMPT_COST = "0.00153";
// Plus 100 × 0.000015 = 0.0015.
const CACHED_COST = "0.00303";
// Without cache prices every prompt token costs `prompt`: 1000 × 0.000003 + 0.0015.
const PLAIN_COST = "0.0045";

test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  const { openaiBaseUrl, anthropicBaseUrl, apiKey } = ctx.upstream;
  const file = await writeCatalogFile({
    providers: [
      { slug: "compat", kind: "openai", base_url: openaiBaseUrl, api_key: apiKey, timeout_ms: 2000 },
      { slug: "anth", kind: "anthropic", base_url: anthropicBaseUrl, api_key: apiKey, timeout_ms: 2000 },
    ],
    models: [
      {
        id: "cache/compat",
        name: "Cached compat",
        context_length: 32_000,
        endpoints: [{ provider: "compat", upstream_model_id: "compat-cached", pricing: CACHE_PRICES }],
      },
      {
        id: "cache/anth",
        name: "Cached anth",
        context_length: 32_000,
        endpoints: [{ provider: "anth", upstream_model_id: "anth-cached", pricing: CACHE_PRICES }],
      },
      {
        id: "cache/plain",
        name: "Plain",
        context_length: 32_000,
        endpoints: [{ provider: "compat", upstream_model_id: "compat-plain", pricing: PLAIN_PRICES }],
      },
    ],
  });
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: file, ...FAST_ENGINE });
  ctx.upstream.rule({ usage: USAGE });
});
test.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.close();
});

type Json = Record<string, unknown>;

async function chat(gw: TestGateway, model: string, stream: boolean): Promise<{ id: string; usage: Json }> {
  const res: Reply = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model, stream, messages: [{ role: "user", content: "hi" }] },
  });
  assert.is(res.status, 200, res.text);
  if (!stream) return { id: at(res.body, "id") as string, usage: at(res.body, "usage") as Json };
  const chunks = sseData(res.text).filter((chunk): chunk is Json => typeof chunk === "object" && chunk !== null);
  const last = chunks.findLast((chunk) => chunk.usage !== undefined && chunk.usage !== null);
  assert.ok(last, `a chunk carries the usage: ${res.text}`);
  return { id: last.id as string, usage: last.usage as Json };
}

async function keyUsage(gw: TestGateway): Promise<number> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data", "usage") as number;
}

for (const [kind, model] of [
  ["OpenAI-compatible", "cache/compat"],
  ["Anthropic", "cache/anth"],
] as const) {
  for (const stream of [false, true]) {
    test(
      `${kind} ${stream ? "streamed" : "plain"}: ` +
        "cache reads and writes at their prices, in the answer, the ledger and GET /key",
      async ({ gw }) => {
        const before = await keyUsage(gw);
        const { id, usage } = await chat(gw, model, stream);
        assert.is(usage.prompt_tokens, 1000);
        assert.is(at(usage, "prompt_tokens_details", "cached_tokens"), 600);
        assert.is(at(usage, "prompt_tokens_details", "cache_write_tokens"), 200);
        assert.is(usage.cost, Number(CACHED_COST));
        assert.is(at(usage, "cost_details", "upstream_inference_prompt_cost"), Number(PROMPT_COST));
        assert.is(at(usage, "cost_details", "upstream_inference_completions_cost"), 0.0015);
        const [row, ...others] = await ledgerRowsOf(gw, id);
        assert.is(others.length, 0);
        assert.is(row!.prompt_tokens, 1000);
        assert.is(row!.cached_tokens, 600);
        assert.is(row!.cache_write_tokens, 200);
        assert.is(row!.cost_usd, CACHED_COST);
        assert.is(Number(((await keyUsage(gw)) - before).toFixed(9)), Number(CACHED_COST));
      },
    );
  }
}

test("GET /generation shows the cached tokens and the cost the ledger holds", async ({ gw }) => {
  const { id } = await chat(gw, "cache/compat", false);
  await gw.gateway.deps.engine.settlement.barrier();
  const res = await call(gw.url, "GET", `/api/v1/generation?id=${encodeURIComponent(id)}`, { key: gw.key });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "native_tokens_prompt"), 1000);
  assert.is(at(res.body, "data", "native_tokens_cached"), 600);
  assert.is(at(res.body, "data", "total_cost"), Number(CACHED_COST));
});

test("Messages: Anthropic's own cache counts and the cache-priced cost", async ({ gw }) => {
  const res = await call(gw.url, "POST", "/api/v1/messages", {
    key: gw.key,
    body: { model: "cache/anth", max_tokens: 100, messages: [{ role: "user", content: "hi" }] },
  });
  assert.is(res.status, 200, res.text);
  assert.equal(at(res.body, "usage"), {
    input_tokens: 200,
    output_tokens: 100,
    cache_read_input_tokens: 600,
    cache_creation_input_tokens: 200,
    cost: Number(CACHED_COST),
  });
});

test("Responses: cached tokens in input_tokens_details and the cache-priced cost", async ({ gw }) => {
  const res = await call(gw.url, "POST", "/api/v1/responses", {
    key: gw.key,
    body: { model: "cache/compat", input: "hi" },
  });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "usage", "input_tokens"), 1000);
  assert.is(at(res.body, "usage", "input_tokens_details", "cached_tokens"), 600);
  assert.is(at(res.body, "usage", "cost"), Number(CACHED_COST));
});

test("batch items: cache counts in each result body; ledger rows with both counts, at the cache prices", async ({
  gw,
}) => {
  const requests = ["a", "b"].map((id) => ({
    custom_id: id,
    body: { model: "cache/anth", max_tokens: 100, messages: [{ role: "user", content: "hi" }] },
  }));
  const accepted = await submit(gw.url, gw.key, { endpoint: "/v1/chat/completions", model: "cache/anth", requests });
  assert.is(accepted.status, 202, accepted.text);
  const batchId = String(at(accepted.body, "id"));
  const done = await waitTerminal(gw.url, gw.key, batchId);
  assert.is(at(done.body, "status"), "completed", done.text);
  for (const result of at(done.body, "results") as Json[]) {
    assert.equal(at(result, "response", "body", "usage", "prompt_tokens_details", "cache_write_tokens"), 200);
  }
  const rows = await gw.gateway.sequelize.query<{
    cached_tokens: number;
    cache_write_tokens: number;
    cost_usd: string;
  }>(
    "SELECT cached_tokens, cache_write_tokens, cost_usd::text AS cost_usd FROM usage_ledger WHERE batch_id = :batchId",
    { type: QueryTypes.SELECT, replacements: { batchId } },
  );
  assert.equal(
    rows,
    [1, 2].map(() => ({ cached_tokens: 600, cache_write_tokens: 200, cost_usd: CACHED_COST })),
  );
});

test("an endpoint without cache prices bills every prompt token at `prompt`", async ({ gw }) => {
  const before = await keyUsage(gw);
  const { id, usage } = await chat(gw, "cache/plain", false);
  assert.is(at(usage, "prompt_tokens_details", "cached_tokens"), 600);
  assert.is(usage.cost, Number(PLAIN_COST));
  assert.is(at(usage, "cost_details", "upstream_inference_prompt_cost"), 0.003);
  const [row] = await ledgerRowsOf(gw, id);
  assert.is(row!.cost_usd, PLAIN_COST);
  assert.is(Number(((await keyUsage(gw)) - before).toFixed(9)), Number(PLAIN_COST));
});

test("the catalog shows a cache price only where the endpoint has one", async ({ gw }) => {
  const res = await call(gw.url, "GET", "/api/v1/models");
  assert.is(res.status, 200, res.text);
  const pricing = (id: string) => ((at(res.body, "data") as Json[]).find((m) => m.id === id) as Json).pricing;
  assert.equal(pricing("cache/compat"), {
    prompt: "0.000003",
    completion: "0.000015",
    image: "0",
    request: "0",
    input_cache_read: "0.0000003",
    input_cache_write: "0.00000375",
  });
  assert.equal(pricing("cache/plain"), { prompt: "0.000003", completion: "0.000015", image: "0", request: "0" });
  const endpoints = await call(gw.url, "GET", "/api/v1/models/cache/anth/endpoints");
  assert.is(endpoints.status, 200, endpoints.text);
  assert.is(at(endpoints.body, "data", "endpoints", 0, "pricing", "input_cache_write"), "0.00000375");
});

test.run();
