import { randomUUID } from "node:crypto";
import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { hashKey } from "../../../server/platform/secrets/key-secret.js";
import { settleCall } from "../../../server/engine/usage/usage-store.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { eventually } from "../../support/eventually.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * Provider preferences, model fallbacks and endpoint fallbacks, seen from outside: which provider
 * answered (`provider` of the answer, the upstream model the mock received) and what the ledger
 * recorded. The catalog is the one of support/inference-gateway.ts, where config order and price
 * order agree (mockai < backup < mockanthropic); the second suite has a catalog of its own where
 * they do not, for data collection and the measured sorts.
 */
const HELLO = [{ role: "user", content: "Hi there" }];

function assertError(res: Reply, status: number, message?: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status, res.text);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}

function assertServedBy(res: Reply, providerName: string): void {
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "provider"), providerName, res.text);
}

// ---------------------------------------------------------------------------------------------

const test = suite<{ env: InferenceGateway }>("routing: provider preferences");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

function chat(env: InferenceGateway, body: Record<string, unknown>): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO, ...body },
  });
}

function upstreamModels(env: InferenceGateway): string[] {
  return env.upstream.requests.map((r) => r.model);
}

test("by default the cheapest endpoint answers", async ({ env }) => {
  const res = await chat(env, {});
  assertServedBy(res, "MockAI");
  assert.is(at(res.body, "model"), "mock/chat");
  assert.equal(upstreamModels(env), ["chat-a"]);
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.equal(
    rows.map((r) => [r.status, r.endpoint_id, r.provider_slug]),
    [["success", "mock/chat@mockai", "mockai"]],
  );
});

test("order puts the listed providers first, in their order", async ({ env }) => {
  assertServedBy(await chat(env, { provider: { order: ["backup"] } }), "Backup");
  assertServedBy(await chat(env, { provider: { order: ["mockanthropic", "backup"] } }), "MockAnthropic");
  assertServedBy(await chat(env, { provider: { order: ["nobody"] } }), "MockAI");
  assert.equal(upstreamModels(env), ["chat-b", "claude-x", "chat-a"]);
});

test("only restricts to the listed providers, cheapest first", async ({ env }) => {
  assertServedBy(await chat(env, { provider: { only: ["backup"] } }), "Backup");
  assertServedBy(await chat(env, { provider: { only: ["mockanthropic"] } }), "MockAnthropic");
  assertServedBy(await chat(env, { provider: { only: ["mockanthropic", "backup"] } }), "Backup");
});

test("ignore skips the listed providers", async ({ env }) => {
  assertServedBy(await chat(env, { provider: { ignore: ["mockai"] } }), "Backup");
  assertServedBy(await chat(env, { provider: { ignore: ["mockai", "backup"] } }), "MockAnthropic");
});

test("sort price ranks by prompt + completion price", async ({ env }) => {
  assertServedBy(await chat(env, { provider: { sort: "price" } }), "MockAI");
  assertServedBy(await chat(env, { provider: { sort: "price", ignore: ["mockai"] } }), "Backup");
  assertServedBy(await chat(env, { provider: { sort: "price", order: ["mockanthropic"] } }), "MockAnthropic");
});

test("zdr keeps only zero-data-retention endpoints (backup and mockanthropic)", async ({ env }) => {
  assertServedBy(await chat(env, { provider: { zdr: true } }), "Backup");
  assertServedBy(await chat(env, { provider: { zdr: true, ignore: ["backup"] } }), "MockAnthropic");
  assertServedBy(await chat(env, { provider: { zdr: false } }), "MockAI");
  assertError(await chat(env, { provider: { zdr: true, only: ["mockai"] } }), 404);
});

test("data_collection deny keeps endpoints that do not collect (every endpoint of this catalog)", async ({ env }) => {
  assertServedBy(await chat(env, { provider: { data_collection: "deny" } }), "MockAI");
  assertServedBy(await chat(env, { provider: { data_collection: "allow" } }), "MockAI");
});

test("require_parameters skips endpoints lacking a parameter in use (Anthropic has no logprobs)", async ({ env }) => {
  const required = await chat(env, {
    logprobs: true,
    provider: { order: ["mockanthropic"], require_parameters: true },
  });
  assertServedBy(required, "MockAI");
  assert.equal(upstreamModels(env), ["chat-a"]);

  // Without it the preferred endpoint serves and the parameter is dropped in translation.
  const relaxed = await chat(env, { logprobs: true, provider: { order: ["mockanthropic"] } });
  assertServedBy(relaxed, "MockAnthropic");
  assert.is(at(env.upstream.requests[1]?.body, "logprobs"), undefined);

  assertError(
    await chat(env, { logprobs: true, provider: { only: ["mockanthropic"], require_parameters: true } }),
    404,
  );
  assertServedBy(
    await chat(env, { temperature: 0.5, provider: { only: ["mockanthropic"], require_parameters: true } }),
    "MockAnthropic",
  );
});

test("preferences that leave no endpoint give 404, streamed or not, without calling anyone", async ({ env }) => {
  assertError(await chat(env, { provider: { only: ["nobody"] } }), 404);
  assertError(await chat(env, { provider: { ignore: ["mockai", "backup", "mockanthropic"] } }), 404);
  assertError(await chat(env, { stream: true, provider: { only: ["nobody"] } }), 404);
  assertError(await chat(env, { provider: { order: ["mockai"], allow_fallbacks: false, ignore: ["mockai"] } }), 404);
  assert.is(env.upstream.requests.length, 0);
});

test("the :floor and :nitro variants route the base model", async ({ env }) => {
  const floor = await chat(env, { model: "mock/chat:floor" });
  assertServedBy(floor, "MockAI");
  assert.is(at(floor.body, "model"), "mock/chat");
  const nitro = await chat(env, { model: "mock/chat:nitro" });
  assert.is(nitro.status, 200, nitro.text);
  assert.is(at(nitro.body, "model"), "mock/chat");
  assertError(await chat(env, { model: "mock/nope:floor" }), 400, /mock\/nope/);
});

test("models: an unknown primary model falls back to the next model", async ({ env }) => {
  const res = await chat(env, { model: "mock/nope", models: ["mock/claude"] });
  assertServedBy(res, "MockAnthropic");
  assert.is(at(res.body, "model"), "mock/claude");
  assert.equal(upstreamModels(env), ["claude-only"]);
  assertError(await chat(env, { model: "mock/nope", models: ["mock/also-nope"] }), 400, /mock\/nope/);
});

test.run();

// ---------------------------------------------------------------------------------------------

/**
 * Fallbacks make endpoints fail, and failures feed the health ranking of later calls (an endpoint
 * failing lately is tried last): these tests have a gateway of their own, and every call names the
 * order of the endpoints, so that no test depends on what an earlier one made fail.
 */
const fallbacks = suite<{ env: InferenceGateway }>("routing: fallbacks");
fallbacks.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
fallbacks.after(async (ctx) => ctx.env.stop());
fallbacks.before.each(({ env }) => env.upstream.reset());

/** The catalog's order (mockai, backup, mockanthropic), stated; a test's own provider preferences are kept. */
function chatInOrder(env: InferenceGateway, body: Record<string, unknown>): Promise<Reply> {
  const provider = {
    order: ["mockai", "backup", "mockanthropic"],
    ...(body.provider as Record<string, unknown> | undefined),
  };
  return chat(env, { ...body, provider });
}

fallbacks("a retryable failure falls back to the next endpoint; the ledger records both attempts", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 500, times: 1 });
  const res = await chatInOrder(env, {});
  assertServedBy(res, "Backup");
  assert.is(at(res.body, "choices", 0, "message", "content"), "Hello from chat-b");
  assert.equal(upstreamModels(env), ["chat-a", "chat-b"]);
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.is(rows.length, 2, JSON.stringify(rows));
  const failed = rows.find((r) => r.status === "error");
  const served = rows.find((r) => r.status === "success");
  assert.ok(failed && served, JSON.stringify(rows));
  assert.is(failed.endpoint_id, "mock/chat@mockai");
  assert.is(failed.http_status, 502);
  assert.is(Number(failed.cost_usd), 0);
  assert.is(served.endpoint_id, "mock/chat@backup");
  assert.ok(Number(served.cost_usd) > 0);
});

fallbacks("a streamed call falls back while no chunk has been sent", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 503, times: 1 });
  const res = await chatInOrder(env, { stream: true });
  assert.is(res.status, 200, res.text);
  assert.match(res.text, /"provider":"Backup"/);
  assert.match(res.text, /data: \[DONE\]/);
  assert.not.match(
    res.text,
    /"(tool_calls|reasoning_details|images)":\[\]/,
    "content deltas carry no empty lists, as in OpenAI's chunks",
  );
  assert.equal(upstreamModels(env), ["chat-a", "chat-b"]);
});

fallbacks("the primary model's endpoints all failing, the fallback model serves", async ({ env }) => {
  for (const model of ["chat-a", "chat-b", "claude-x"]) env.upstream.rule({ model, status: 529, times: 1 });
  const res = await chatInOrder(env, { models: ["mock/claude"] });
  assertServedBy(res, "MockAnthropic");
  assert.is(at(res.body, "model"), "mock/claude");
  assert.equal(upstreamModels(env), ["chat-a", "chat-b", "claude-x", "claude-only"]);
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.equal(
    rows
      .filter((r) => r.status === "error")
      .map((r) => r.endpoint_id)
      .sort(),
    ["mock/chat@backup", "mock/chat@mockai", "mock/chat@mockanthropic"],
  );
  assert.equal(
    rows.filter((r) => r.status === "success").map((r) => [r.model_id, r.endpoint_id]),
    [["mock/claude", "mock/claude@mockanthropic"]],
  );
});

fallbacks("a non-retryable failure (the request itself is bad) does not fall back", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 400, times: 1 });
  assertError(await chatInOrder(env, {}), 400);
  assert.equal(upstreamModels(env), ["chat-a"]);
});

fallbacks("allow_fallbacks false: the first endpoint's error, no other endpoint tried", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 500, times: 1 });
  assertError(await chatInOrder(env, { provider: { allow_fallbacks: false } }), 502);
  assert.equal(upstreamModels(env), ["chat-a"]);

  env.upstream.reset();
  env.upstream.rule({ model: "chat-b", status: 503, times: 1 });
  assertError(await chatInOrder(env, { provider: { order: ["backup"], allow_fallbacks: false } }), 503);
  assert.equal(upstreamModels(env), ["chat-b"]);
});

fallbacks("every endpoint failing: the caller gets the last endpoint's error", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 429, times: 1 });
  env.upstream.rule({ model: "chat-b", status: 503, times: 1 });
  env.upstream.rule({ model: "claude-x", status: 529, times: 1 });
  assertError(await chatInOrder(env, {}), 529);
  assert.equal(upstreamModels(env), ["chat-a", "chat-b", "claude-x"]);
});

fallbacks.run();

// ---------------------------------------------------------------------------------------------

/**
 * A catalog where price, data collection, throughput and latency each pick a different endpoint:
 * `cheap` (lowest price, collects data), `mid` (lowest latency), `fast` (highest throughput,
 * highest price). The speeds are seeded into the ledger before the first call, as many rows per
 * endpoint that the suite's own calls cannot move the medians.
 */
interface Measured {
  gw: TestGateway;
  upstream: MockUpstream;
}

const measured = suite<Measured>("routing: data collection and measured sorts");
const SEEDS: Record<string, { latencyMs: number; tokensPerSecond: number }> = {
  "r/chat@cheap": { latencyMs: 3000, tokensPerSecond: 1 },
  "r/chat@mid": { latencyMs: 5, tokensPerSecond: 100 },
  "r/chat@fast": { latencyMs: 500, tokensPerSecond: 1000 },
};
const SEED_ROWS = 40;

measured.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  const provider = (slug: string, name: string, dataCollection: string) => ({
    slug,
    name,
    kind: "openai",
    base_url: ctx.upstream.openaiBaseUrl,
    api_key: ctx.upstream.apiKey,
    data_collection: dataCollection,
    timeout_ms: 2000,
  });
  const file = await writeCatalogFile({
    providers: [provider("cheap", "Cheap", "allow"), provider("mid", "Mid", "deny"), provider("fast", "Fast", "deny")],
    models: [
      {
        id: "r/chat",
        name: "Routing: Chat",
        created: 1_700_000_000,
        context_length: 8_000,
        endpoints: [
          { provider: "cheap", upstream_model_id: "r-cheap", pricing: { prompt: "0.000001", completion: "0.000001" } },
          { provider: "mid", upstream_model_id: "r-mid", pricing: { prompt: "0.000002", completion: "0.000002" } },
          { provider: "fast", upstream_model_id: "r-fast", pricing: { prompt: "0.000003", completion: "0.000003" } },
        ],
      },
    ],
  });
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: file });
  await seedSpeeds(ctx.gw);
  // Ranking reads stats loaded in the background on first use: until they are in, every
  // endpoint is unmeasured and the sort falls back to config order (cheap first).
  await eventually(() => measuredChat(ctx, { provider: { sort: "throughput" } }), "the measured stats are loaded", {
    until: (res) => at(res.body, "provider") === "Fast",
  });
});
measured.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.close();
});
measured.before.each(({ upstream }) => upstream.reset());

async function seedSpeeds(gw: TestGateway): Promise<void> {
  const keyHash = hashKey(gw.key);
  const [key] = await gw.gateway.sequelize.query<{ organization_id: string; workspace_id: string }>(
    "SELECT organization_id, workspace_id FROM api_keys WHERE hash = :keyHash",
    {
      type: QueryTypes.SELECT,
      replacements: { keyHash },
    },
  );
  assert.ok(key);
  const rows = Object.entries(SEEDS).flatMap(([endpointId, speed]) =>
    Array.from({ length: SEED_ROWS }, () => {
      const completionTokens = 100;
      return settleCall(gw.gateway.sequelize, {
        generationId: `gen-seed-${randomUUID()}`,
        organizationId: key.organization_id,
        keyHash,
        workspaceId: key.workspace_id,
        memberUserId: null,
        endUser: null,
        sessionId: null,
        api: "chat",
        modelId: "r/chat",
        providerSlug: endpointId.split("@")[1]!,
        endpointId,
        status: "success",
        httpStatus: 200,
        streamed: true,
        promptTokens: 10,
        completionTokens,
        reasoningTokens: 0,
        cachedTokens: 0,
        costUsd: "0",
        isByok: false,
        isFree: false,
        latencyMs: speed.latencyMs,
        generationMs: speed.latencyMs + Math.round((completionTokens * 1000) / speed.tokensPerSecond),
        reservationId: null,
      });
    }),
  );
  await Promise.all(rows);
}

function measuredChat(ctx: Measured, body: Record<string, unknown>): Promise<Reply> {
  return call(ctx.gw.url, "POST", "/api/v1/chat/completions", {
    key: ctx.gw.key,
    body: { model: "r/chat", messages: HELLO, ...body },
  });
}

measured("default: the cheapest healthy endpoint, even though it collects data", async (ctx) => {
  assertServedBy(await measuredChat(ctx, {}), "Cheap");
  assertServedBy(await measuredChat(ctx, { provider: { data_collection: "allow" } }), "Cheap");
});

measured("data_collection deny skips endpoints that collect data", async (ctx) => {
  assertServedBy(await measuredChat(ctx, { provider: { data_collection: "deny" } }), "Mid");
  assertError(await measuredChat(ctx, { provider: { data_collection: "deny", only: ["cheap"] } }), 404);
});

measured("sort throughput and sort latency use the measured medians", async (ctx) => {
  assertServedBy(await measuredChat(ctx, { provider: { sort: "throughput" } }), "Fast");
  assertServedBy(await measuredChat(ctx, { provider: { sort: "latency" } }), "Mid");
  assertServedBy(await measuredChat(ctx, { provider: { sort: "price" } }), "Cheap");
  assertServedBy(await measuredChat(ctx, { provider: { sort: "throughput", order: ["mid"] } }), "Mid");
});

measured(":nitro sorts by throughput, :floor by price (over the request's sort)", async (ctx) => {
  const nitro = await measuredChat(ctx, { model: "r/chat:nitro" });
  assertServedBy(nitro, "Fast");
  assert.is(at(nitro.body, "model"), "r/chat");
  assertServedBy(await measuredChat(ctx, { model: "r/chat:floor", provider: { sort: "throughput" } }), "Cheap");
  assertServedBy(await measuredChat(ctx, { model: "r/chat:floor", provider: { sort: "latency" } }), "Cheap");
  assert.equal(
    ctx.upstream.requests.map((r) => r.model),
    ["r-fast", "r-cheap", "r-cheap"],
  );
});

measured.run();
