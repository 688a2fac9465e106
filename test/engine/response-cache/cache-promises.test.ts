import { randomUUID } from "node:crypto";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { sweepCachedAnswers, writeCachedAnswer } from "../../../server/engine/response-cache/response-cache-store.js";

/**
 * The promises of docs/cache.md that response-cache.test.ts does not hold: what the key is made of
 * (the model, the endpoint routing chose, every field but the few left out), that a hit touches no
 * budget but counts against the rate limit, and that the sweep takes the oldest entries. Each test
 * uses keys of its own (all in the default workspace, which shares entries), since the rate limit
 * is per key and small here.
 */
const RATE_LIMIT = 8;
const test = suite<{ env: InferenceGateway }>("response cache: the promises of docs/cache.md");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({
    GATEWAY_RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
    GATEWAY_RATE_LIMIT_WINDOW_SECONDS: "3600",
    GATEWAY_CACHE_SWEEP_MS: "3600000",
  });
});
test.after(async (ctx) => {
  await ctx.env?.stop();
});

let unique = 0;
const question = (label: string) => `${label} #${++unique} ${Math.random().toString(36).slice(2)}`;
const cacheOf = (res: Reply) => res.headers.get("x-gateway-cache");

async function newKey(
  env: InferenceGateway,
  body: Record<string, unknown> = {},
): Promise<{ key: string; hash: string }> {
  const res = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.gw.key,
    body: { name: `k-${Math.random().toString(36).slice(2)}`, ...body },
  });
  assert.is(res.status, 201, res.text);
  return { key: String(at(res.body, "key")), hash: String(at(res.body, "data", "hash")) };
}

function chat(env: InferenceGateway, key: string, body: Record<string, unknown>): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key,
    headers: { "x-gateway-cache-ttl": "300" },
    body: { model: "mock/chat", ...body },
  });
}

/** What each call said of the cache, in order. */
async function said(
  env: InferenceGateway,
  key: string,
  bodies: Array<Record<string, unknown>>,
): Promise<Array<string | null>> {
  const out: Array<string | null> = [];
  for (const body of bodies) {
    const res = await chat(env, key, body);
    assert.is(res.status, 200, res.text);
    out.push(cacheOf(res));
  }
  return out;
}

test("another model misses", async ({ env }) => {
  const { key } = await newKey(env);
  const messages = [{ role: "user", content: question("model") }];
  assert.equal(
    await said(env, key, [{ messages }, { messages, model: "mock/claude" }, { messages, model: "mock/claude" }]),
    ["miss", "miss", "hit"],
  );
});

test(
  "the key holds the endpoint routing chose: " +
    "another endpoint order, or a guardrail that forbids the first endpoint, misses",
  async ({ env }) => {
    const { key } = await newKey(env);
    const messages = [{ role: "user", content: question("order") }];
    const backupFirst = { messages, provider: { order: ["backup"] } };
    assert.equal(await said(env, key, [{ messages }, backupFirst, backupFirst, { messages }]), [
      "miss",
      "miss",
      "hit",
      "hit",
    ]);

    const forbidding = await newKey(env);
    const guardrail = await call(env.gw.url, "POST", "/api/v1/guardrails", {
      key: env.gw.key,
      body: { name: `no-mockai-${unique}`, ignored_providers: ["mockai"] },
    });
    assert.is(guardrail.status, 201, guardrail.text);
    const assigned = await call(
      env.gw.url,
      "POST",
      `/api/v1/guardrails/${String(at(guardrail.body, "data", "id"))}/assignments/keys`,
      {
        key: env.gw.key,
        body: { key_hashes: [forbidding.hash] },
      },
    );
    assert.is(assigned.status, 200, assigned.text);
    const fresh = [{ role: "user", content: question("guardrail") }];
    assert.equal(await said(env, key, [{ messages: fresh }]), ["miss"], "stored under mockai");
    const first = await chat(env, forbidding.key, { messages: fresh });
    assert.is(at(first.body, "provider"), "Backup");
    assert.is(cacheOf(first), "miss", "mockai's answer is not served to a key that may not use mockai");
    assert.equal(await said(env, forbidding.key, [{ messages: fresh }]), ["hit"]);
  },
);

test("another tools list, tool_choice, response_format or max_tokens each miss", async ({ env }) => {
  const { key } = await newKey(env);
  const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object" } } };
  const time = { type: "function", function: { name: "get_time", parameters: { type: "object" } } };
  const base = { messages: [{ role: "user", content: question("fields") }], tools: [weather], max_tokens: 50 };
  assert.equal(
    await said(env, key, [
      base,
      base,
      { ...base, tools: [weather, time] },
      { ...base, tool_choice: "none" },
      { ...base, response_format: { type: "json_object" } },
      { ...base, max_tokens: 60 },
    ]),
    ["miss", "hit", "miss", "miss", "miss", "miss"],
  );
});

test("a hit on a key whose credit limit is spent answers 200 at cost 0, and its usage does not move", async ({
  env,
}) => {
  const { gw } = env;
  // About 1 000 prompt tokens: admission reserves about $0.005 (the route's dearest endpoint, at
  // $0.000005 a token), the call costs about $0.001 (the cheapest, which answers), and what the
  // limit has left then admits no other call.
  const padding = " lorem".repeat(650);
  const { key } = await newKey(env, { limit: 0.0055 });
  const paid = [{ role: "user", content: question("spent") + padding }];
  const miss = await chat(env, key, { messages: paid, max_tokens: 5 });
  assert.is(miss.status, 200, miss.text);
  assert.is(cacheOf(miss), "miss");
  await gw.gateway.deps.engine.settlement.barrier();
  const usage = async () => at((await call(gw.url, "GET", "/api/v1/key", { key })).body, "data", "usage") as number;
  const spent = await usage();
  assert.ok(spent > 0.0005, `spent ${spent}`);
  const refused = await chat(env, key, {
    messages: [{ role: "user", content: question("spent, new") + padding }],
    max_tokens: 5,
  });
  assert.is(refused.status, 402, `the rest of the limit pays for no other call: ${refused.text}`);
  const hit = await chat(env, key, { messages: paid, max_tokens: 5 });
  assert.is(hit.status, 200, hit.text);
  assert.is(cacheOf(hit), "hit");
  assert.is(at(hit.body, "usage", "cost"), 0);
  await gw.gateway.deps.engine.settlement.barrier();
  assert.is(await usage(), spent);
});

test("hits past the rate limit answer 429", async ({ env }) => {
  const { key } = await newKey(env);
  const messages = [{ role: "user", content: question("rate") }];
  const answers = await said(
    env,
    key,
    Array.from({ length: RATE_LIMIT }, () => ({ messages })),
  );
  assert.equal(answers, ["miss", ...Array<string>(RATE_LIMIT - 1).fill("hit")]);
  const limited = await chat(env, key, { messages });
  assert.is(limited.status, 429, limited.text);
  assert.ok(Number(limited.headers.get("retry-after")) >= 1);
});

test("the sweep removes the oldest entries and keeps the newest", async ({ env }) => {
  const { sequelize } = env.gw.gateway.deps;
  await sequelize.query("DELETE FROM response_cache");
  const scope = {
    workspaceId: randomUUID(),
    api: "chat" as const,
    modelId: "mock/chat",
    endpointId: "mock/chat@mockai",
  };
  const answer = { pad: "x".repeat(990) };
  const text = JSON.stringify(answer);
  const usage = { promptTokens: 1, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0 };
  // Written in shuffled order under random keys: only the created times say which is older.
  for (const offset of [3, 7, 0, 5, 1, 6, 2, 4]) {
    await writeCachedAnswer(
      sequelize,
      `entry-${randomUUID()}`,
      scope,
      { answer, usage, costUsd: "0", endpointId: scope.endpointId, created: 1_700_000_000 + offset },
      text,
      3600,
    );
  }
  assert.equal(await sweepCachedAnswers(sequelize, 3500), { deleted: 5, bytes: 3000 });
  const kept = await sequelize.query<{ key: string; created: string }>(
    "SELECT key, extract(epoch FROM created_at)::int::text AS created FROM response_cache ORDER BY created_at",
    {
      type: "SELECT" as never,
    },
  );
  assert.equal(
    kept.map((row) => Number(row.created) - 1_700_000_000),
    [5, 6, 7],
    "the three newest are kept",
  );
});

test.run();
