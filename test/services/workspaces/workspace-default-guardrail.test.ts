import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * Every workspace has a default guardrail (`default_guardrail_id` is a uuid, never null).
 * A workspace is created with one that restricts nothing, and such a guardrail behaves exactly as
 * no guardrail: every model and endpoint (those that may train on prompts included), no budget,
 * every data region. It can be replaced, not cleared, and is not deleted while it is a default.
 */
type Json = Record<string, unknown>;
const test = suite<{ gw: TestGateway; upstream: MockUpstream }>("workspace default guardrail");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HELLO = [{ role: "user", content: "Hi" }];

test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  // Every endpoint may train on prompts: a guardrail with the training flags off refuses them all.
  const provider = {
    slug: "collects",
    name: "Collects",
    kind: "openai",
    base_url: ctx.upstream.openaiBaseUrl,
    api_key: ctx.upstream.apiKey,
    data_collection: "allow",
    region: "europe",
  };
  const model = (id: string, price: string) => ({
    id,
    name: id,
    context_length: 8000,
    endpoints: [
      { provider: "collects", upstream_model_id: id.replace("/", "-"), pricing: { prompt: price, completion: price } },
    ],
  });
  const file = await writeCatalogFile({
    providers: [provider],
    models: [model("t/paid", "0.000001"), model("t/free", "0")],
  });
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: file });
});
test.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.close();
});

const get = (gw: TestGateway, path: string, key = gw.key) => call(gw.url, "GET", path, { key });

async function ok(res: Promise<Reply>): Promise<Json> {
  const reply = await res;
  assert.ok(reply.status >= 200 && reply.status < 300, reply.text);
  return at(reply.body, "data") as Json;
}

async function keyWorkspace(gw: TestGateway, key = gw.key): Promise<Json> {
  const id = at(await ok(get(gw, "/api/v1/key", key)), "workspace_id") as string;
  return ok(get(gw, `/api/v1/workspaces/${id}`));
}

function assertRestrictsNothing(guardrail: Json, workspaceId: string): void {
  assert.is(guardrail.workspace_id, workspaceId);
  for (const list of [
    "allowed_models",
    "ignored_models",
    "allowed_providers",
    "ignored_providers",
    "allowed_data_regions",
  ])
    assert.is(guardrail[list], null, list);
  for (const flag of [
    "enforce_zdr",
    "enforce_zdr_anthropic",
    "enforce_zdr_google",
    "enforce_zdr_openai",
    "enforce_zdr_other",
    "enforce_zdr_xai",
  ])
    assert.is(guardrail[flag], null, flag);
  for (const flag of ["enable_free_model_training", "enable_paid_model_training", "enable_free_model_publication"])
    assert.is(guardrail[flag], true, flag);
  assert.is(guardrail.limit_usd, null);
  assert.is(guardrail.reset_interval, null);
  assert.equal(guardrail.content_filter_builtins, []);
}

test("the bootstrap's workspace and a new workspace each get a guardrail that restricts nothing", async ({ gw }) => {
  const bootstrap = await keyWorkspace(gw);
  assert.match(String(bootstrap.default_guardrail_id), UUID);
  assertRestrictsNothing(
    await ok(get(gw, `/api/v1/guardrails/${String(bootstrap.default_guardrail_id)}`)),
    bootstrap.id as string,
  );

  const created = await ok(
    call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: "Fresh", slug: "fresh" } }),
  );
  assert.match(String(created.default_guardrail_id), UUID);
  assert.is.not(created.default_guardrail_id, bootstrap.default_guardrail_id, "a guardrail of its own");
  assertRestrictsNothing(
    await ok(get(gw, `/api/v1/guardrails/${String(created.default_guardrail_id)}`)),
    created.id as string,
  );
  const listed = await get(gw, `/api/v1/guardrails?workspace_id=${String(created.id)}`);
  assert.is(at(listed.body, "total_count"), 1, "listed with the workspace's guardrails");

  const named = await ok(
    call(gw.url, "POST", "/api/v1/workspaces", {
      key: gw.key,
      body: { name: "Named", slug: "named", default_guardrail_id: bootstrap.default_guardrail_id },
    }),
  );
  assert.is(named.default_guardrail_id, bootstrap.default_guardrail_id, "a named default is used as it is");
  assert.is(
    at((await get(gw, `/api/v1/guardrails?workspace_id=${String(named.id)}`)).body, "total_count"),
    0,
    "and no other is created",
  );
});

test("a guardrail that restricts nothing behaves as none: models, training endpoints, budgets, regions", async ({
  gw,
}) => {
  const me = await ok(get(gw, "/api/v1/key"));
  assert.equal(me.budgets, [], "no guardrail budget");
  assert.is(me.effective_budget, null);
  assert.equal([...(me.allowed_data_regions as string[])].sort(), ["europe", "global", "us"]);
  const mine = await get(gw, "/api/v1/models/user");
  const everyone = await call(gw.url, "GET", "/api/v1/models");
  assert.is(at(mine.body, "total_count"), at(everyone.body, "total_count"));
  assert.is(at(mine.body, "total_count"), 2);
  for (const model of ["t/paid", "t/free"]) {
    const res = await call(gw.url, "POST", "/api/v1/chat/completions", {
      key: gw.key,
      body: { model, messages: HELLO },
    });
    assert.is(res.status, 200, `${model} on an endpoint that may train on prompts: ${res.text}`);
  }

  // The same guardrail, once it restricts, is applied: it is the workspace's guardrail in earnest.
  const guardrailId = String((await keyWorkspace(gw)).default_guardrail_id);
  await ok(
    call(gw.url, "PATCH", `/api/v1/guardrails/${guardrailId}`, {
      key: gw.key,
      body: { allowed_models: ["t/free"], limit_usd: 5 },
    }),
  );
  const refused = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model: "t/paid", messages: HELLO },
  });
  assert.is(refused.status, 403, refused.text);
  assert.equal(
    (at(await ok(get(gw, "/api/v1/key")), "budgets") as Json[]).map((b) => [b.guardrail_id, b.scope]),
    [[guardrailId, "workspace"]],
  );
  await ok(
    call(gw.url, "PATCH", `/api/v1/guardrails/${guardrailId}`, {
      key: gw.key,
      body: { allowed_models: null, limit_usd: null },
    }),
  );
});

test("replaced, not cleared; not deleted while it is a default, nor with the workspace that holds another's", async ({
  gw,
}) => {
  const a = await ok(call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: "A", slug: "ws-a" } }));
  const b = await ok(call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: "B", slug: "ws-b" } }));
  const own = String(a.default_guardrail_id);

  const cleared = await call(gw.url, "PATCH", "/api/v1/workspaces/ws-a", {
    key: gw.key,
    body: { default_guardrail_id: null },
  });
  assert.is(cleared.status, 400, cleared.text);
  assert.match(String(at(cleared.body, "error", "message")), /default_guardrail_id cannot be null/);

  const deleting = await call(gw.url, "DELETE", `/api/v1/guardrails/${own}`, { key: gw.key });
  assert.is(deleting.status, 409, deleting.text);
  assert.match(String(at(deleting.body, "error", "message")), /default guardrail of workspace 'ws-a'/);

  // B borrows A's guardrail: A cannot go while B depends on it.
  const borrowed = await ok(
    call(gw.url, "PATCH", "/api/v1/workspaces/ws-b", { key: gw.key, body: { default_guardrail_id: own } }),
  );
  assert.is(borrowed.default_guardrail_id, own);
  const gone = await call(gw.url, "DELETE", "/api/v1/workspaces/ws-a", { key: gw.key });
  assert.is(gone.status, 409, gone.text);
  assert.match(String(at(gone.body, "error", "message")), /default guardrail of workspace 'ws-b'/);

  // Once B has its own again, B's first guardrail is free to go, and so is A with its own.
  await ok(
    call(gw.url, "PATCH", "/api/v1/workspaces/ws-b", {
      key: gw.key,
      body: { default_guardrail_id: b.default_guardrail_id },
    }),
  );
  assert.is((await call(gw.url, "DELETE", "/api/v1/workspaces/ws-a", { key: gw.key })).status, 200);
  assert.is((await get(gw, `/api/v1/guardrails/${own}`)).status, 404, "A's guardrails went with it");
});

test.run();
