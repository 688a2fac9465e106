import * as assert from "uvu/assert";
import { createEndpointStatsCache, NO_STATS } from "../../../server/engine/catalog/endpoint-stats.js";
import type { TestGateway } from "../../support/gateway.js";
import { at } from "../../support/http.js";
import { assertError, get, type Json, modelsSuite } from "./models-fixture.js";

/** GET /models/{author}/{slug}/endpoints: a model's endpoints, and their stats from the recorded calls. */
const test = modelsSuite("models api: endpoints");

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
    `INSERT INTO usage_ledger (id, generation_id, created_at, organization_id, key_hash, workspace_id, api, model_id,
                               provider_slug, endpoint_id, status, http_status, completion_tokens, latency_ms,
                               generation_ms)
     VALUES (gen_random_uuid(), 'gen-test', now() - CAST(:age AS interval), gen_random_uuid(), repeat('a', 64),
             gen_random_uuid(), 'chat', 'openai/gpt-4o', 'openai', :endpoint, :status, :httpStatus, :tokens, :latency,
             :generation)`,
    { replacements: { age, endpoint, status, httpStatus, tokens, latency, generation } },
  );
}

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
const stats = modelsSuite("models api: endpoint stats");

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
