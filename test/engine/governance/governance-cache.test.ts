import pg from "pg";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.js";

/**
 * Keys and their governance are cached between requests (server/engine/governance/governance-cache.ts).
 * A change must be seen by the next request of the instance that made it, by every other instance
 * (LISTEN/NOTIFY), and also when it was written to the database by something else entirely.
 */
const test = suite<{ env: InferenceGateway; second: GatewayProcess; proxy: TcpProxy }>("governance cache");
// The second instance reaches the database through a relay that can silence its connections.
const FEED_CHECK_MS = 300;
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
  const database = new URL(ctx.env.gw.databaseUrl);
  ctx.proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port) });
  database.port = String(ctx.proxy.port);
  ctx.second = await startGatewayProcess({
    databaseUrl: database.toString(),
    key: ctx.env.gw.key,
    env: {
      GATEWAY_CONFIG: ctx.env.configFile,
      MOCK_UPSTREAM_KEY: ctx.env.upstream.apiKey,
      GATEWAY_GOVERNANCE_FEED_CHECK_MS: String(FEED_CHECK_MS),
    },
  });
});
test.after(async (ctx) => {
  await ctx.second?.stop();
  await ctx.proxy?.close();
  await ctx.env?.stop();
});

function chat(base: string, key: string): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", {
    key,
    body: { model: "mock/chat", messages: [{ role: "user", content: "hi" }] },
  });
}

async function newKey(env: InferenceGateway): Promise<{ key: string; hash: string }> {
  const res = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.gw.key,
    body: { name: `k-${Math.random().toString(36).slice(2)}` },
  });
  assert.is(res.status, 201, res.text);
  return { key: String(at(res.body, "key")), hash: String(at(res.body, "data", "hash")) };
}

/** Chats until the instance at `base` answers `status`: it hears of a change asynchronously. */
function chatUntilStatus(base: string, key: string, status: number): Promise<Reply> {
  return eventually(() => chat(base, key), `the instance at ${base} answers ${status}`, {
    until: (res) => res.status === status,
  });
}

test("a key disabled through one instance is refused by the next request there and soon by the other", async ({
  env,
  second,
}) => {
  const { key, hash } = await newKey(env);
  // Both instances have the key and its governance cached.
  assert.is((await chat(env.gw.url, key)).status, 200);
  assert.is((await chat(second.url, key)).status, 200);
  const patched = await call(env.gw.url, "PATCH", `/api/v1/keys/${hash}`, {
    key: env.gw.key,
    body: { disabled: true },
  });
  assert.is(patched.status, 200, patched.text);
  const here = await chat(env.gw.url, key);
  assert.is(here.status, 401, here.text);
  await chatUntilStatus(second.url, key, 401);
});

test("a feed connection that dies without a word is noticed, and a key disabled meanwhile is refused there", async ({
  env,
  second,
  proxy,
}) => {
  const { key, hash } = await newKey(env);
  assert.is((await chat(second.url, key)).status, 200);
  const lostBefore = second.lines.filter((line) => line.includes("database notification feed lost")).length;
  assert.is(
    proxy.silence((sent) => sent.includes("LISTEN gateway_governance")),
    1,
    "the second instance's LISTEN connection",
  );
  const disabledAt = performance.now();
  const patched = await call(env.gw.url, "PATCH", `/api/v1/keys/${hash}`, {
    key: env.gw.key,
    body: { disabled: true },
  });
  assert.is(patched.status, 200, patched.text);
  // The notification went into the silenced connection: only the feed's own check can find out.
  await eventually(
    () => second.lines.filter((line) => line.includes("database notification feed lost")).length,
    "the second instance notices its feed is gone",
    {
      until: (lost) => lost > lostBefore,
    },
  );
  await chatUntilStatus(second.url, key, 401);
  console.log(
    `  disabled → refused on the other instance, feed silently dead, check every ${FEED_CHECK_MS} ms: ` +
      `${Math.round(performance.now() - disabledAt)} ms`,
  );
});

test("a guardrail assigned through one instance governs the other's next calls", async ({ env, second }) => {
  const { key, hash } = await newKey(env);
  assert.is((await chat(second.url, key)).status, 200);
  const created = await call(env.gw.url, "POST", "/api/v1/guardrails", {
    key: env.gw.key,
    body: { name: `g-${hash.slice(0, 8)}`, ignored_models: ["mock/chat"] },
  });
  assert.is(created.status, 201, created.text);
  const assigned = await call(
    env.gw.url,
    "POST",
    `/api/v1/guardrails/${String(at(created.body, "data", "id"))}/assignments/keys`,
    { key: env.gw.key, body: { key_hashes: [hash] } },
  );
  assert.is(assigned.status, 200, assigned.text);
  assert.is((await chat(env.gw.url, key)).status, 403);
  const refused = await chatUntilStatus(second.url, key, 403);
  assert.match(String(at(refused.body, "error", "message")), /mock\/chat/);
});

test("a change written straight into the database reaches both instances", async ({ env, second }) => {
  const { key, hash } = await newKey(env);
  assert.is((await chat(env.gw.url, key)).status, 200);
  assert.is((await chat(second.url, key)).status, 200);
  const client = new pg.Client(env.gw.databaseUrl);
  await client.connect();
  try {
    await client.query("UPDATE api_keys SET disabled = true WHERE hash = $1", [hash]);
  } finally {
    await client.end();
  }
  await chatUntilStatus(env.gw.url, key, 401);
  await chatUntilStatus(second.url, key, 401);
});

test.run();
