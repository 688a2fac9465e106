import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../support/http.js";
import { runUntil, startVideoGateway, submitVideo, videoLedger, type VideoGateway } from "../../support/videos.js";

/**
 * Video submissions are governed like chat: the key's credit limit and budgets (402 with the cost
 * reserved at submission, released when the job ends), guardrails (403 naming the rule; allowed
 * providers steer the choice of endpoint), the rate limit (429), BYOK keys, and fallback to the
 * model's next endpoint when a provider is unavailable.
 */
const test = suite<{ env: VideoGateway }>("video governance");

const RATE_LIMIT = 5;

test.before(async (ctx) => {
  ctx.env = await startVideoGateway({ GATEWAY_RATE_LIMIT_REQUESTS: String(RATE_LIMIT) });
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const JOB = { model: "mock/video", prompt: "a fox in the snow", duration: 8 };

async function newKey(env: VideoGateway, body: Record<string, unknown> = {}): Promise<{ key: string; hash: string }> {
  const res = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.gw.key,
    body: { name: `k-${Math.random().toString(36).slice(2)}`, ...body },
  });
  assert.is(res.status, 201, res.text);
  return { key: String(at(res.body, "key")), hash: String(at(res.body, "data", "hash")) };
}

async function guardrail(env: VideoGateway, keyHash: string, body: Record<string, unknown>): Promise<void> {
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

function assertError(res: Reply, status: number, message?: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}

async function reservedFor(env: VideoGateway, keyHash: string): Promise<number> {
  const [row] = await env.gw.gateway.sequelize.query<{ total: string | null }>(
    "SELECT sum(amount_usd)::text AS total FROM budget_reservations WHERE key_hash = :keyHash",
    {
      type: QueryTypes.SELECT,
      replacements: { keyHash },
    },
  );
  return Number(row?.total ?? 0);
}

test("the key's credit limit: 402 when the job's cost does not fit; the cost is held until the job ends", async ({
  env,
}) => {
  const { gw, upstream } = env;
  // 8 s cost $0.85; 4 s $0.45.
  const { key, hash } = await newKey(env, { limit: 0.5 });
  assertError(await submitVideo(gw.url, key, JOB), 402, /\$0\.85/);
  assert.is(upstream.videos.calls.create, 0);
  const accepted = await submitVideo(gw.url, key, { ...JOB, duration: 4 });
  assert.is(accepted.status, 202, accepted.text);
  assert.is(await reservedFor(env, hash), 0.45);
  // Held while the job runs: a second one does not fit beside it.
  assertError(await submitVideo(gw.url, key, { ...JOB, duration: 4 }), 402);
  const id = String(at(accepted.body, "id"));
  await runUntil(gw.gateway, key, id, "completed");
  assert.is(await reservedFor(env, hash), 0);
  const current = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(current.body, "data", "usage"), 0.45, current.text);
  assert.is(at(current.body, "data", "limit_remaining"), 0.05);
  // A free model needs no credit.
  assert.is((await submitVideo(gw.url, key, { model: "mock/video-free", prompt: "free" })).status, 202);
});

test("a failed job releases what it held and costs nothing", async ({ env }) => {
  const { gw, upstream } = env;
  const { key, hash } = await newKey(env, { limit: 1 });
  upstream.videos.failNext = "no capacity for this scene";
  const accepted = await submitVideo(gw.url, key, JOB);
  assert.is(accepted.status, 202, accepted.text);
  assert.is(await reservedFor(env, hash), 0.85);
  await runUntil(gw.gateway, key, String(at(accepted.body, "id")), "failed");
  assert.is(await reservedFor(env, hash), 0);
  const current = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(current.body, "data", "usage"), 0);
});

test("a workspace budget refuses with 402 naming it", async ({ env }) => {
  const { gw } = env;
  const workspace = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: { name: "Budgeted", slug: `budgeted-${Date.now()}` },
  });
  assert.is(workspace.status, 201, workspace.text);
  const workspaceId = String(at(workspace.body, "data", "id"));
  const budget = await call(gw.url, "PUT", `/api/v1/workspaces/${workspaceId}/budgets/daily`, {
    key: gw.key,
    body: { limit_usd: 0.1 },
  });
  assert.is(budget.status, 200, budget.text);
  const { key } = await newKey(env, { workspace_id: workspaceId });
  assertError(await submitVideo(gw.url, key, JOB), 402, /budget/i);
});

test("guardrails: a refused model is 403 naming the rule; allowed providers steer the endpoint", async ({ env }) => {
  const { gw, upstream } = env;
  const refused = await newKey(env);
  await guardrail(env, refused.hash, { ignored_models: ["mock/video"] });
  assertError(await submitVideo(gw.url, refused.key, JOB), 403, /ignored_models/);

  const steered = await newKey(env);
  await guardrail(env, steered.hash, { allowed_providers: ["backup"] });
  const res = await submitVideo(gw.url, steered.key, JOB);
  assert.is(res.status, 202, res.text);
  assert.is(at(upstream.requests.find((r) => r.path === "/openai/v1/videos")?.body, "model"), "sora-backup");
  await runUntil(gw.gateway, steered.key, String(at(res.body, "id")), "completed");
  const row = (await videoLedger(gw.gateway)).at(-1);
  assert.is(row?.endpoint_id, "mock/video@backup");

  const zdr = await newKey(env);
  await guardrail(env, zdr.hash, { enforce_zdr: true, allowed_providers: ["mockai"] });
  assertError(await submitVideo(gw.url, zdr.key, JOB), 403, /enforce_zdr|allowed_providers/);
});

test("an unavailable provider: the next endpoint takes the job; when none does, the provider's status", async ({
  env,
}) => {
  const { gw, upstream } = env;
  upstream.videos.fail("create", 503);
  const res = await submitVideo(gw.url, gw.key, JOB);
  assert.is(res.status, 202, res.text);
  const creates = upstream.requests.filter((r) => r.path === "/openai/v1/videos").map((r) => at(r.body, "model"));
  assert.equal(creates, ["sora-mock", "sora-backup"]);
  await runUntil(gw.gateway, gw.key, String(at(res.body, "id")), "completed");
  assert.is((await videoLedger(gw.gateway)).at(-1)?.endpoint_id, "mock/video@backup");

  upstream.reset();
  upstream.videos.fail("create", 429, { times: 2, retryAfter: 7 });
  const busy = await submitVideo(gw.url, gw.key, JOB);
  assertError(busy, 429, /rate limiting/);
  assert.is(busy.headers.get("retry-after"), "7");

  upstream.videos.fail("create", 500, { times: 2 });
  assertError(await submitVideo(gw.url, gw.key, JOB), 502);
});

test("BYOK: the gateway's key is refused upstream, the workspace's own key works and the job is is_byok", async ({
  env,
}) => {
  const { gw, upstream } = env;
  const { key } = await newKey(env);
  assertError(await submitVideo(gw.url, key, { model: "mock/video-byok", prompt: "byok" }), 502, /credentials/);
  const byok = await call(gw.url, "POST", "/api/v1/byok", {
    key: gw.key,
    body: { provider: "openai", key: upstream.apiKey },
  });
  assert.is(byok.status, 201, byok.text);
  const res = await submitVideo(gw.url, key, { model: "mock/video-byok", prompt: "byok" });
  assert.is(res.status, 202, res.text);
  const done = await runUntil(gw.gateway, key, String(at(res.body, "id")), "completed");
  assert.equal(at(done.body, "usage"), { cost: 0.4, is_byok: true });
  assert.is((await videoLedger(gw.gateway)).at(-1)?.is_byok, true);
  const current = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(current.body, "data", "byok_usage"), 0.4);
  assert.is(at(current.body, "data", "usage"), 0, "BYOK spend is not usage");
  assert.not.match(JSON.stringify(done.body), upstream.apiKey);
});

test("the rate limit: 429 with Retry-After once the key's requests are spent", async ({ env }) => {
  const { gw } = env;
  const { key } = await newKey(env);
  for (let i = 0; i < RATE_LIMIT; i++)
    assert.is((await submitVideo(gw.url, key, { model: "mock/video-free", prompt: `n${i}` })).status, 202);
  const limited = await submitVideo(gw.url, key, { model: "mock/video-free", prompt: "one too many" });
  assertError(limited, 429, /Rate limit/);
  assert.ok(Number(limited.headers.get("retry-after")) >= 1);
});

test.run();
