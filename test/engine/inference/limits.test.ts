import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Per-key rate limits and the free-model daily quota, counted in Postgres: a second gateway
 * process on the same database shares the counts.
 */
const RATE_LIMIT = 4;
const FREE_QUOTA = 2;

const test = suite<{ env: InferenceGateway; second: GatewayProcess }>("rate limits and free-model quota");
test.before(async (ctx) => {
  const limits = {
    GATEWAY_RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
    GATEWAY_RATE_LIMIT_WINDOW_SECONDS: "3600",
    GATEWAY_FREE_MODEL_DAILY_REQUESTS: String(FREE_QUOTA),
  };
  ctx.env = await startInferenceGateway(limits);
  ctx.second = await startGatewayProcess({
    databaseUrl: ctx.env.gw.databaseUrl,
    key: ctx.env.gw.key,
    env: { ...limits, GATEWAY_CONFIG: ctx.env.configFile, MOCK_UPSTREAM_KEY: ctx.env.upstream.apiKey },
  });
});
test.after(async (ctx) => {
  await ctx.second?.stop();
  await ctx.env.stop();
});

async function newKey(env: InferenceGateway): Promise<string> {
  const res = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.gw.key,
    body: { name: `k-${Math.random().toString(36).slice(2)}` },
  });
  return String(at(res.body, "key"));
}

function chat(base: string, key: string, model = "mock/chat"): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", {
    key,
    body: { model, messages: [{ role: "user", content: "hi" }] },
  });
}

test("the rate limit holds across two gateway instances and answers 429 with Retry-After", async ({ env, second }) => {
  const key = await newKey(env);
  const bases = [env.gw.url, second.url];
  const statuses: number[] = [];
  for (let i = 0; i < RATE_LIMIT; i++) statuses.push((await chat(bases[i % 2]!, key)).status);
  assert.equal(statuses, Array(RATE_LIMIT).fill(200));
  for (const base of bases) {
    const limited = await chat(base, key);
    assert.is(limited.status, 429, limited.text);
    assert.is(at(limited.body, "error", "code"), 429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 3600, `retry-after ${retryAfter}`);
  }
  assert.is((await chat(env.gw.url, await newKey(env))).status, 200, "another key has its own window");
});

test("50 concurrent calls over two instances against the rate limit: at most the limit succeed, the rest 429", async ({
  env,
  second,
}) => {
  const key = await newKey(env);
  const bases = [env.gw.url, second.url];
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(bases[i % 2]!, key)));
  const ok = results.filter((r) => r.status === 200).length;
  assert.ok(ok <= RATE_LIMIT && ok >= RATE_LIMIT / 2, `${ok} calls succeeded`);
  for (const refused of results.filter((r) => r.status !== 200)) {
    assert.is(refused.status, 429, refused.text);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
  }
});

test("free-model requests are counted per key per day and reported on GET /key", async ({ env, second }) => {
  const key = await newKey(env);
  assert.is((await chat(env.gw.url, key, "mock/free")).status, 200);
  assert.is((await chat(second.url, key, "mock/free")).status, 200);
  const over = await chat(env.gw.url, key, "mock/free");
  assert.is(over.status, 429, over.text);
  assert.match(String(at(over.body, "error", "message")), /Free-model daily request limit/);
  assert.ok(Number(over.headers.get("retry-after")) >= 1);
  assert.is((await chat(env.gw.url, key)).status, 200, "paid models are not limited by the free quota");
  // GET /key waits for its own instance's settlement queue only: the second instance's call is
  // written behind by that instance, so it is counted once its row lands.
  const current = await eventually(
    () => call(env.gw.url, "GET", "/api/v1/key", { key }),
    "both free-model calls are counted on GET /key",
    {
      until: (res) => at(res.body, "data", "free_model_daily_requests", "used") === FREE_QUOTA,
    },
  );
  assert.equal(at(current.body, "data", "free_model_daily_requests"), {
    limit: FREE_QUOTA,
    remaining: 0,
    used: FREE_QUOTA,
  });
});

test.run();
