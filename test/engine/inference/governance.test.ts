import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import { at, call, rawRequest, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Governance on the request path: every rule once refusing and once allowing, streaming and not.
 */
const test = suite<{ env: InferenceGateway }>("inference governance");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const HELLO = [{ role: "user", content: "Hi there" }];

function chat(
  env: InferenceGateway,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key,
    body: { model: "mock/chat", messages: HELLO, ...body },
    headers,
  });
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

async function guardrail(env: InferenceGateway, keyHash: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(env.gw.url, "POST", "/api/v1/guardrails", {
    key: env.gw.key,
    body: { name: `g-${Math.random().toString(36).slice(2)}`, ...body },
  });
  assert.is(res.status, 201, res.text);
  const id = String(at(res.body, "data", "id"));
  const assigned = await call(env.gw.url, "POST", `/api/v1/guardrails/${id}/assignments/keys`, {
    key: env.gw.key,
    body: { key_hashes: [keyHash] },
  });
  assert.is(assigned.status, 200, assigned.text);
  return id;
}

function assertError(res: Reply, status: number, message?: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}

async function streamed(env: InferenceGateway, key: string, body: Record<string, unknown>): Promise<Reply> {
  return chat(env, key, { ...body, stream: true });
}

test("guardrail allowed_models and ignored_models refuse with 403 naming the rule, streaming or not", async ({
  env,
}) => {
  const { key, hash } = await newKey(env);
  await guardrail(env, hash, { allowed_models: ["mock/claude"] });
  assertError(await chat(env, key, {}), 403, /allowed_models/);
  assertError(await streamed(env, key, {}), 403, /allowed_models/);
  const allowed = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key,
    body: { model: "mock/claude", messages: HELLO },
  });
  assert.is(allowed.status, 200, allowed.text);

  const other = await newKey(env);
  await guardrail(env, other.hash, { ignored_models: ["mock/chat"] });
  assertError(await chat(env, other.key, {}), 403, /ignored_models/);
});

test("guardrail providers: ignored providers are skipped, an allow list restricts routing", async ({ env }) => {
  const { key, hash } = await newKey(env);
  await guardrail(env, hash, { ignored_providers: ["mockai"] });
  const res = await chat(env, key, {});
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "provider"), "Backup");

  const only = await newKey(env);
  await guardrail(env, only.hash, { allowed_providers: ["mockanthropic"] });
  const viaAnthropic = await chat(env, only.key, {});
  assert.is(at(viaAnthropic.body, "provider"), "MockAnthropic");
  await guardrail(env, only.hash, { allowed_providers: ["nobody"] });
  assertError(await chat(env, only.key, {}), 403, /allowed_providers/);
});

test("guardrail data regions and ZDR narrow the endpoints; nothing left is a 403", async ({ env }) => {
  const eu = await newKey(env);
  await guardrail(env, eu.hash, { allowed_data_regions: ["europe"] });
  const res = await chat(env, eu.key, {});
  assert.is(at(res.body, "provider"), "MockAnthropic", res.text);
  assertError(
    await call(env.gw.url, "POST", "/api/v1/embeddings", { key: eu.key, body: { model: "mock/embed", input: "x" } }),
    403,
    /allowed_data_regions/,
  );

  const zdr = await newKey(env);
  await guardrail(env, zdr.hash, { enforce_zdr: true });
  const zdrRes = await chat(env, zdr.key, {});
  assert.is(at(zdrRes.body, "provider"), "Backup", zdrRes.text);
  assertError(
    await call(env.gw.url, "POST", "/api/v1/chat/completions", {
      key: zdr.key,
      body: { model: "mock/free", messages: HELLO },
    }),
    403,
    /zdr/i,
  );
});

test("a regional hostname keeps requests in its region", async ({ env }) => {
  // fetch cannot set Host; a raw request can.
  const regional = (path: string, body: unknown) =>
    rawRequest(env.gw.url, "POST", path, {
      key: env.gw.key,
      headers: { host: "eu.gateway.test", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const res = await regional("/api/v1/chat/completions", { model: "mock/chat", messages: HELLO });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(at(res.body, "provider"), "MockAnthropic");
  const refused = await regional("/api/v1/embeddings", { model: "mock/embed", input: "x" });
  assert.is(refused.status, 403);
  assert.match(String(at(refused.body, "error", "message")), /region/);
});

test("disabled server tools answer 403; enabled ones are refused as unavailable (400)", async ({ env }) => {
  const patched = await call(env.gw.url, "PATCH", "/api/v1/workspaces/default", {
    key: env.gw.key,
    body: { disabled_server_tools: ["svc:web_search"] },
  });
  assert.is(patched.status, 200, patched.text);
  try {
    assertError(await chat(env, env.gw.key, { tools: [{ type: "svc:web_search" }] }), 403, /svc:web_search/);
    assertError(await streamed(env, env.gw.key, { tools: [{ type: "svc:web_search" }] }), 403, /svc:web_search/);
    assertError(await chat(env, env.gw.key, { tools: [{ type: "svc:datetime" }] }), 400, /svc:datetime/);
    assertError(await chat(env, env.gw.key, { tools: [{ type: "function" }] }), 400, /function/);
    assert.is(env.upstream.requests.length, 0);
  } finally {
    await call(env.gw.url, "PATCH", "/api/v1/workspaces/default", {
      key: env.gw.key,
      body: { disabled_server_tools: null },
    });
  }
});

test("disabled and expired keys get 401", async ({ env }) => {
  const { key, hash } = await newKey(env);
  await call(env.gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: env.gw.key, body: { disabled: true } });
  assertError(await chat(env, key, {}), 401);
  // An hour away: still ahead at the first call however slow the machine; the test then moves it into the past.
  const expiring = await newKey(env, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  assert.is((await chat(env, expiring.key, {})).status, 200);
  await env.gw.gateway.sequelize.query(
    "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE hash = :hash",
    { replacements: { hash: expiring.hash } },
  );
  // A write behind the API's back reaches the governance cache through the change feed (NOTIFY), a moment later.
  const refused = await eventually(() => chat(env, expiring.key, {}), "the expired key is refused", {
    until: (res) => res.status !== 200,
  });
  assertError(refused, 401, /expired/);
});

test("the key's credit limit: 402 before the call when the worst case does not fit", async ({ env }) => {
  // One call with max_tokens 3 costs at most 7 prompt + 3 completion tokens on chat-a: $0.000013.
  const { key } = await newKey(env, { limit: 0.00002 });
  const only = { provider: { only: ["mockai"] }, max_tokens: 3 };
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 } });
  assert.is((await chat(env, key, only)).status, 200);
  assertError(await chat(env, key, only), 402, /credit limit/);
  assertError(await streamed(env, key, only), 402);
  const current = await call(env.gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(current.body, "data", "usage"), 0.000013);
  assert.is(at(current.body, "data", "limit_remaining"), 0.000007);
});

test("50 concurrent requests against a budget that allows 10: exactly 10 succeed, none overspends", async ({ env }) => {
  const { key, hash } = await newKey(env, { limit: 0.00013 });
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 }, delayMs: 20 });
  const results = await Promise.all(
    Array.from({ length: 50 }, () => chat(env, key, { provider: { only: ["mockai"] }, max_tokens: 3 })),
  );
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 402).length;
  assert.is(ok, 10);
  assert.is(refused, 40);
  const current = await call(env.gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(current.body, "data", "usage"), 0.00013);
  // Settled spend plus what this instance still holds leased never passes the limit.
  await env.gw.gateway.deps.engine.settlement.barrier();
  const [held] = await env.gw.gateway.sequelize.query<{ spent: string; leased: string }>(
    `SELECT (SELECT coalesce(sum(spent_usd), 0) FROM usage_counters
              WHERE scope = 'key' AND scope_id = :hash AND period = 'lifetime')::text AS spent,
            (SELECT coalesce(sum(granted), 0) FROM admission_leases WHERE quantity = :quantity)::text AS leased`,
    { type: QueryTypes.SELECT, replacements: { hash, quantity: `key:${hash}:lifetime` } },
  );
  assert.is(Number(held?.spent), 0.00013);
  assert.ok(
    Number(held?.spent) + Number(held?.leased) <= 0.00013 + 1e-12,
    `spent ${held?.spent} + leased ${held?.leased} stays within the limit`,
  );
});

test("a failed call releases its reservation and costs nothing", async ({ env }) => {
  const { key } = await newKey(env, { limit: 0.00002 });
  env.upstream.rule({ status: 500, times: 1 });
  const only = { provider: { only: ["mockai"] }, max_tokens: 3 };
  assertError(await chat(env, key, only), 502);
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 } });
  assert.is((await chat(env, key, only)).status, 200, "the failed call's reservation no longer holds the budget");
});

test("workspace and guardrail budgets refuse with 402 naming the budget", async ({ env }) => {
  const ws = await call(env.gw.url, "POST", "/api/v1/workspaces", {
    key: env.gw.key,
    body: { name: "Budgeted", slug: "budgeted" },
  });
  const workspaceId = String(at(ws.body, "data", "id"));
  const budget = await call(env.gw.url, "PUT", `/api/v1/workspaces/${workspaceId}/budgets/daily`, {
    key: env.gw.key,
    body: { limit_usd: 0.00002 },
  });
  assert.is(budget.status, 200, budget.text);
  const { key } = await newKey(env, { workspace_id: workspaceId });
  const only = { provider: { only: ["mockai"] }, max_tokens: 3 };
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 } });
  assert.is((await chat(env, key, only)).status, 200);
  assertError(await chat(env, key, only), 402, /workspace's daily budget/);

  const guarded = await newKey(env);
  await guardrail(env, guarded.hash, { limit_usd: 0.00002, reset_interval: "weekly" });
  assert.is((await chat(env, guarded.key, only)).status, 200);
  assertError(await chat(env, guarded.key, only), 402, /weekly budget of guardrail/);
  const current = await call(env.gw.url, "GET", "/api/v1/key", { key: guarded.key });
  const guardBudget = (at(current.body, "data", "budgets") as Array<Record<string, unknown>>).find(
    (b) => b.guardrail_id,
  );
  assert.is(guardBudget?.spend_usd, 0.000013);
});

test("usage lands in the ledger and on GET /key; BYOK calls use the workspace's key and count as BYOK", async ({
  env,
}) => {
  const { key, hash } = await newKey(env);
  const res = await chat(env, key, { provider: { only: ["mockai"] }, user: "end-user-1", session_id: "s-1" });
  assert.is(res.status, 200, res.text);
  await env.gw.gateway.deps.engine.settlement.barrier();
  const [row] = await env.gw.gateway.sequelize.query<Record<string, unknown>>(
    "SELECT * FROM usage_ledger WHERE key_hash = :hash",
    { type: QueryTypes.SELECT, replacements: { hash } },
  );
  assert.is(row?.generation_id, at(res.body, "id"));
  assert.is(row?.model_id, "mock/chat");
  assert.is(row?.endpoint_id, "mock/chat@mockai");
  assert.is(row?.end_user, "end-user-1");
  assert.is(row?.session_id, "s-1");
  assert.is(row?.status, "success");
  assert.is(Number(row?.cost_usd), at(res.body, "usage", "cost"));
  const endUser = await call(env.gw.url, "GET", "/api/v1/end-users/end-user-1", { key: env.gw.key });
  assert.is(endUser.status, 200, endUser.text);

  // The gateway's own key for provider `openai` is refused upstream; the workspace's BYOK key works.
  assertError(
    await call(env.gw.url, "POST", "/api/v1/chat/completions", { key, body: { model: "mock/byok", messages: HELLO } }),
    502,
    /credentials/,
  );
  const byok = await call(env.gw.url, "POST", "/api/v1/byok", {
    key: env.gw.key,
    body: { provider: "openai", key: env.upstream.apiKey },
  });
  assert.is(byok.status, 201, byok.text);
  const own = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key,
    body: { model: "mock/byok", messages: HELLO },
  });
  assert.is(own.status, 200, own.text);
  assert.is(at(own.body, "usage", "is_byok"), true);
  const current = await call(env.gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(current.body, "data", "byok_usage"), at(own.body, "usage", "cost"));
  assert.is(at(current.body, "data", "usage"), at(res.body, "usage", "cost"), "BYOK spend is not usage");
  assert.not.match(JSON.stringify(current.body) + JSON.stringify(own.body), env.upstream.apiKey);
});

test.run();
