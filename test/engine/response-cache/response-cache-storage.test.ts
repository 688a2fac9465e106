import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { eventually } from "../../support/eventually.js";
import { startGatewayProcess } from "../../support/gateway-process.js";
import { call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Where cached answers live (server/engine/response-cache): PostgreSQL, shared by every instance
 * and kept across restarts, with each process's memory in front; entries expire with their TTL,
 * and the sweep keeps the table under GATEWAY_CACHE_MAX_BYTES, oldest first. The sweep runs by
 * hand here (its period is an hour), so that what it deletes is known.
 */
const MAX_BYTES = 3000;
const test = suite<{ env: InferenceGateway }>("response cache: storage, expiry and the size bound");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({
    GATEWAY_CACHE_MAX_BYTES: String(MAX_BYTES),
    GATEWAY_CACHE_SWEEP_MS: "3600000",
  });
});
test.after(async (ctx) => {
  await ctx.env?.stop();
});

let unique = 0;
const question = (label: string) => `${label} #${++unique} ${Math.random().toString(36).slice(2)}`;
function chat(base: string, key: string, content: string, ttl = "300"): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", {
    key,
    headers: { "x-gateway-cache-ttl": ttl },
    body: { model: "mock/chat", messages: [{ role: "user", content }] },
  });
}
const cacheOf = (res: Reply) => res.headers.get("x-gateway-cache");

test("an expired entry misses", async ({ env }) => {
  const { url, key, gateway } = env.gw;
  const { sequelize } = gateway.deps;
  const { responseCache } = gateway.deps.engine;
  const rows = async () =>
    Number(
      (await sequelize.query<{ n: string }>("SELECT count(*) AS n FROM response_cache", { type: "SELECT" as never }))[0]
        ?.n ?? 0,
    );
  const content = question("expiry");
  const before = await rows();
  assert.is(cacheOf(await chat(url, key, content, "1")), "miss");
  await responseCache.barrier();
  // Stored (an expired row stays until the sweep), so the misses below are its expiry: no call has
  // to fit into the second.
  assert.is(await rows(), before + 1);
  await eventually(() => chat(url, key, content, "1"), "the entry expires after its second", {
    until: (res) => cacheOf(res) === "miss",
  });
});

test("the sweep keeps PostgreSQL under GATEWAY_CACHE_MAX_BYTES, deleting the oldest entries first", async ({ env }) => {
  const { gw } = env;
  const { sequelize } = gw.gateway.deps;
  const { responseCache } = gw.gateway.deps.engine;
  const questions = Array.from({ length: 8 }, () => question("size bound"));
  for (const content of questions) {
    assert.is(cacheOf(await chat(gw.url, gw.key, content)), "miss");
    await responseCache.barrier();
  }
  const size = async () =>
    Number(
      (
        await sequelize.query<{ bytes: string }>("SELECT coalesce(sum(size_bytes), 0) AS bytes FROM response_cache", {
          type: "SELECT" as never,
        })
      )[0]?.bytes ?? 0,
    );
  assert.ok((await size()) > MAX_BYTES, "eight answers are more than the bound");
  await responseCache.sweep();
  assert.ok((await size()) <= MAX_BYTES);
  const kept = await sequelize.query<{ n: string }>("SELECT count(*) AS n FROM response_cache", {
    type: "SELECT" as never,
  });
  assert.ok(Number(kept[0]?.n) >= 1);
});

test("two instances share an entry, and it holds through a restart", async ({ env }) => {
  const { gw, configFile, upstream } = env;
  const content = question("shared");
  assert.is(cacheOf(await chat(gw.url, gw.key, content)), "miss");
  await gw.gateway.deps.engine.responseCache.barrier();
  const processEnv = { GATEWAY_CONFIG: configFile, MOCK_UPSTREAM_KEY: upstream.apiKey };
  const second = await startGatewayProcess({ databaseUrl: gw.databaseUrl, key: gw.key, env: processEnv });
  try {
    assert.is(
      cacheOf(await chat(second.url, gw.key, content)),
      "hit",
      "the other instance reads the entry from PostgreSQL",
    );
  } finally {
    await second.stop();
  }
  const restarted = await startGatewayProcess({ databaseUrl: gw.databaseUrl, key: gw.key, env: processEnv });
  try {
    assert.is(cacheOf(await chat(restarted.url, gw.key, content)), "hit", "a new process has it too");
  } finally {
    await restarted.stop();
  }
  assert.is(
    upstream.requests.filter(
      (r) => (r.body as { messages?: Array<{ content: string }> }).messages?.[0]?.content === content,
    ).length,
    1,
  );
});

test.run();
