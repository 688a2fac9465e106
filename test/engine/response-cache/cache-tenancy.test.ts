import { randomUUID } from "node:crypto";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { sweepCachedAnswers, writeCachedAnswer } from "../../../server/engine/response-cache/response-cache-store.js";
import type { CachedAnswer } from "../../../server/engine/response-cache/cached-answer.js";

/**
 * One tenant of the response cache cannot hurt another (server/engine/response-cache, docs/cache.md):
 * a guardrail that demands zero data retention turns the cache off for its calls, an answer above
 * GATEWAY_CACHE_MAX_ENTRY_BYTES is not kept, and the sweep takes a flooding workspace's entries
 * before another's that is within its fair share. The sweep runs by hand on rows written straight
 * to the store, with chosen ages.
 */
const MAX_ENTRY_BYTES = 2048;
const test = suite<{ env: InferenceGateway }>("response cache: tenants apart");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({
    GATEWAY_CACHE_MAX_ENTRY_BYTES: String(MAX_ENTRY_BYTES),
    GATEWAY_CACHE_SWEEP_MS: "3600000",
  });
});
test.after(async (ctx) => {
  await ctx.env?.stop();
});
test.before.each(({ env }) => env.upstream.reset());

let unique = 0;
const question = (label: string) => `${label} #${++unique} ${Math.random().toString(36).slice(2)}`;
const cacheOf = (res: Reply) => res.headers.get("x-gateway-cache");
const upstreamCalls = (env: InferenceGateway) =>
  env.upstream.requests.filter((r) => r.path.endsWith("/chat/completions")).length;

function chat(
  env: InferenceGateway,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = { "x-gateway-cache-ttl": "300" },
): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", { key, headers, body: { model: "mock/chat", ...body } });
}

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

async function guardrailOn(env: InferenceGateway, keyHash: string, body: Record<string, unknown>): Promise<void> {
  const res = await call(env.gw.url, "POST", "/api/v1/guardrails", {
    key: env.gw.key,
    body: { name: `g-${Math.random().toString(36).slice(2)}`, ...body },
  });
  assert.is(res.status, 201, res.text);
  const assigned = await call(
    env.gw.url,
    "POST",
    `/api/v1/guardrails/${String(at(res.body, "data", "id"))}/assignments/keys`,
    { key: env.gw.key, body: { key_hashes: [keyHash] } },
  );
  assert.is(assigned.status, 200, assigned.text);
}

async function rowsOf(env: InferenceGateway, workspaceId?: string): Promise<number> {
  await env.gw.gateway.deps.engine.responseCache.barrier();
  const [row] = await env.gw.gateway.deps.sequelize.query<{ n: string }>(
    workspaceId
      ? "SELECT count(*) AS n FROM response_cache WHERE workspace_id = $1"
      : "SELECT count(*) AS n FROM response_cache",
    { bind: workspaceId ? [workspaceId] : [], type: "SELECT" as never },
  );
  return Number(row?.n ?? 0);
}

test("a key under a guardrail demanding zero data retention: bypass, and nothing is stored", async ({ env }) => {
  const { key, hash } = await newKey(env);
  await guardrailOn(env, hash, { enforce_zdr: true });
  const messages = [{ role: "user", content: question("zdr") }];
  const before = await rowsOf(env);
  const first = await chat(env, key, { messages });
  assert.is(first.status, 200, first.text);
  assert.is(at(first.body, "provider"), "Backup", "routed to the ZDR endpoint");
  assert.is(cacheOf(first), "bypass");
  assert.is(cacheOf(await chat(env, key, { messages })), "bypass");
  assert.is(upstreamCalls(env), 2);
  assert.is(await rowsOf(env), before, "no row was written");
  // The same request by a key of the workspace without the guardrail, routed to the same endpoint, finds nothing.
  const other = await chat(env, env.gw.key, { messages, provider: { order: ["backup"] } });
  assert.is(other.status, 200, other.text);
  assert.is(cacheOf(other), "miss");
});

test("the ZDR rule is the model's: a per-author flag for another author leaves the cache on", async ({ env }) => {
  const openaiOnly = await newKey(env);
  await guardrailOn(env, openaiOnly.hash, { enforce_zdr_openai: true });
  const messages = [{ role: "user", content: question("zdr openai") }];
  assert.is(cacheOf(await chat(env, openaiOnly.key, { messages })), "miss");
  assert.is(cacheOf(await chat(env, openaiOnly.key, { messages })), "hit");

  const other = await newKey(env);
  await guardrailOn(env, other.hash, { enforce_zdr_other: true });
  const mine = [{ role: "user", content: question("zdr other") }];
  assert.is(
    cacheOf(await chat(env, other.key, { messages: mine })),
    "bypass",
    "mock/chat's author falls under enforce_zdr_other",
  );
});

test(
  "a workspace whose default guardrail demands ZDR: " + "its calls bypass the cache, its own default TTL included",
  async ({ env }) => {
    const { gw } = env;
    const workspace = await call(gw.url, "POST", "/api/v1/workspaces", {
      key: gw.key,
      body: { name: "No retention", slug: `zdr-${Date.now()}`, svc_cache_ttl_seconds: 300 },
    });
    assert.is(workspace.status, 201, workspace.text);
    const workspaceId = String(at(workspace.body, "data", "id"));
    const guardrailId = String(at(workspace.body, "data", "default_guardrail_id"));
    const patched = await call(gw.url, "PATCH", `/api/v1/guardrails/${guardrailId}`, {
      key: gw.key,
      body: { enforce_zdr: true },
    });
    assert.is(patched.status, 200, patched.text);
    const created = await call(gw.url, "POST", "/api/v1/keys", {
      key: gw.key,
      body: { name: "no retention", workspace_id: workspaceId },
    });
    assert.is(created.status, 201, created.text);
    const key = String(at(created.body, "key"));
    const messages = [{ role: "user", content: question("workspace zdr") }];
    const asked: Array<Record<string, string>> = [{}, {}, { "x-gateway-cache-ttl": "300" }];
    for (const headers of asked) {
      const res = await chat(env, key, { messages }, headers);
      assert.is(res.status, 200, res.text);
      assert.is(cacheOf(res), "bypass");
    }
    assert.is(upstreamCalls(env), 3);
    assert.is(await rowsOf(env, workspaceId), 0);
  },
);

test("an answer above GATEWAY_CACHE_MAX_ENTRY_BYTES is served as a miss and not stored; a small one is", async ({
  env,
}) => {
  const workspaceId = String(
    at((await call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key })).body, "data", "workspace_id"),
  );
  const long = "word ".repeat(MAX_ENTRY_BYTES / 4).trim();
  env.upstream.rule({ reply: long, times: 2 });
  const messages = [{ role: "user", content: question("too large") }];
  const before = await rowsOf(env, workspaceId);
  const first = await chat(env, env.gw.key, { messages });
  assert.is(first.status, 200, first.text);
  assert.is(at(first.body, "choices", 0, "message", "content"), long);
  assert.is(cacheOf(first), "miss");
  const again = await chat(env, env.gw.key, { messages });
  assert.is(cacheOf(again), "miss", "nothing was kept, in memory or in PostgreSQL");
  assert.is(await rowsOf(env, workspaceId), before);
  assert.is(upstreamCalls(env), 2);

  const small = [{ role: "user", content: question("small") }];
  assert.is(cacheOf(await chat(env, env.gw.key, { messages: small })), "miss");
  assert.is(cacheOf(await chat(env, env.gw.key, { messages: small })), "hit");
});

/** A stored answer whose JSON is exactly `bytes` long. */
function entryOf(bytes: number, created: number): { entry: CachedAnswer; text: string } {
  const answer = { pad: "x".repeat(bytes - '{"pad":""}'.length) };
  const usage = { promptTokens: 1, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0 };
  return {
    entry: { answer, usage, costUsd: "0.000001", endpointId: "mock/chat@mockai", created },
    text: JSON.stringify(answer),
  };
}

test(
  "fair share: a workspace floods the cache, " +
    "and the sweep keeps another's older entries that are within its share",
  async ({ env }) => {
    const { sequelize } = env.gw.gateway.deps;
    await sequelize.query("DELETE FROM response_cache");
    const [quiet, flood] = [randomUUID(), randomUUID()];
    const t0 = 1_700_000_000;
    const write = async (workspaceId: string, key: string, created: number) => {
      const { entry, text } = entryOf(1000, created);
      await writeCachedAnswer(
        sequelize,
        key,
        { workspaceId, api: "chat", modelId: "mock/chat", endpointId: "mock/chat@mockai" },
        entry,
        text,
        3600,
      );
    };
    // The quiet workspace's two entries are the oldest of all.
    for (let i = 0; i < 2; i++) await write(quiet, `quiet-${i}`, t0 + i);
    for (let i = 0; i < 10; i++) await write(flood, `flood-${i}`, t0 + 10 + i);
    const keys = async () =>
      (
        await sequelize.query<{ key: string }>("SELECT key FROM response_cache ORDER BY created_at, key", {
          type: "SELECT" as never,
        })
      ).map((r) => r.key);

    assert.is(
      (await sweepCachedAnswers(sequelize, 12_000)).deleted,
      0,
      "within the bound nothing goes, however the workspaces share it",
    );
    // 12 000 bytes against 6 000: each workspace's share is 3 000, the quiet one holds 2 000.
    const swept = await sweepCachedAnswers(sequelize, 6000);
    assert.equal(swept, { deleted: 6, bytes: 6000 });
    assert.equal(
      await keys(),
      ["quiet-0", "quiet-1", "flood-6", "flood-7", "flood-8", "flood-9"],
      "the flood's oldest went, the quiet workspace kept everything",
    );
  },
);

test.run();
