import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { at, call, type Reply } from "../../support/http.js";
import { sseData } from "../../support/sse.js";
import { eventually } from "../../support/eventually.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * The response cache (server/engine/response-cache, docs/cache.md) through the REST API: opt-in per
 * request, keyed by workspace, model, endpoint and the canonical request, answered at no cost.
 * The mock upstream counts what reached it.
 */
const test = suite<{ env: InferenceGateway }>("response cache: hits, misses and what a hit costs");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => {
  await ctx.env?.stop();
});
test.before.each(({ env }) => env.upstream.reset());

const CHAT = "/api/v1/chat/completions";
let unique = 0;
/** A question no other test asks, so that entries of one test never answer another. */
const question = (label: string) => `${label} #${++unique} ${Math.random().toString(36).slice(2)}`;

function chat(
  env: InferenceGateway,
  body: Record<string, unknown>,
  headers: Record<string, string> = { "x-gateway-cache-ttl": "300" },
  key = env.gw.key,
): Promise<Reply> {
  return call(env.gw.url, "POST", CHAT, { key, headers, body: { model: "mock/chat", ...body } });
}

type Chunk = {
  choices: Array<{ delta?: { content?: string }; finish_reason?: string | null }>;
  usage?: { cost: number };
};
/** The chunks of an event stream, without its `[DONE]`. */
const chunksOf = (text: string) =>
  sseData(text).filter((data): data is Chunk => typeof data === "object" && data !== null && "choices" in data);

const upstreamCalls = (env: InferenceGateway) =>
  env.upstream.requests.filter((r) => r.path.endsWith("/chat/completions") || r.path.endsWith("/embeddings")).length;

test(
  "a miss goes upstream and is stored; " +
    "the same request is then a hit: same answer, new id, original created and tokens, cost 0",
  async ({ env }) => {
    const messages = [{ role: "user", content: question("hit") }];
    const miss = await chat(env, { messages });
    assert.is(miss.status, 200, miss.text);
    assert.is(miss.headers.get("x-gateway-cache"), "miss");
    assert.is(upstreamCalls(env), 1);
    const hit = await chat(env, { messages });
    assert.is(hit.status, 200, hit.text);
    assert.is(hit.headers.get("x-gateway-cache"), "hit");
    assert.is(upstreamCalls(env), 1, "the hit did not reach the provider");
    assert.ok(hit.headers.get("x-gateway-overhead-ms"), "a hit says what the gateway added, like every answer");
    assert.is(at(hit.body, "choices", 0, "message", "content"), at(miss.body, "choices", 0, "message", "content"));
    assert.is.not(at(hit.body, "id"), at(miss.body, "id"));
    assert.is(at(hit.body, "created"), at(miss.body, "created"));
    assert.is(at(hit.body, "usage", "prompt_tokens"), at(miss.body, "usage", "prompt_tokens"));
    assert.is(at(hit.body, "usage", "completion_tokens"), at(miss.body, "usage", "completion_tokens"));
    assert.ok((at(miss.body, "usage", "cost") as number) > 0);
    assert.is(at(hit.body, "usage", "cost"), 0);
  },
);

test("without a TTL nothing is read or written (bypass); a bad TTL is a 400 naming the header", async ({ env }) => {
  const messages = [{ role: "user", content: question("bypass") }];
  const first = await chat(env, { messages }, {});
  assert.is(first.headers.get("x-gateway-cache"), "bypass");
  assert.is((await chat(env, { messages }, {})).headers.get("x-gateway-cache"), "bypass");
  assert.is((await chat(env, { messages })).headers.get("x-gateway-cache"), "miss", "nothing was stored without a TTL");
  assert.is(upstreamCalls(env), 3);
  for (const ttl of ["0", "-5", "abc", "1.5", "86401"]) {
    const bad = await chat(env, { messages }, { "x-gateway-cache-ttl": ttl });
    assert.is(bad.status, 400, `${ttl}: ${bad.text}`);
    assert.match(bad.text, /x-gateway-cache-ttl must be a whole number of seconds from 1 to 86400/);
  }
});

test("the key is canonical: reordered keys and 1.0 against 1 hit; a different temperature misses", async ({ env }) => {
  const content = question("canonical");
  assert.is(
    (await chat(env, { temperature: 1.0, max_tokens: 50, messages: [{ role: "user", content }] })).headers.get(
      "x-gateway-cache",
    ),
    "miss",
  );
  const reordered = await call(env.gw.url, "POST", CHAT, {
    key: env.gw.key,
    headers: { "x-gateway-cache-ttl": "300" },
    raw:
      `{"messages":[{"content":${JSON.stringify(content)},"role":"user"}],` +
      `"max_tokens":50,"model":"mock/chat","temperature":1}`,
  });
  assert.is(reordered.headers.get("x-gateway-cache"), "hit", reordered.text);
  assert.is(
    (await chat(env, { temperature: 0.5, max_tokens: 50, messages: [{ role: "user", content }] })).headers.get(
      "x-gateway-cache",
    ),
    "miss",
  );
  assert.is(upstreamCalls(env), 2);
});

test("a streamed request is served from a plain entry as chunks ending with [DONE], and the other way round", async ({
  env,
}) => {
  const plain = [{ role: "user", content: question("plain first") }];
  const stored = await chat(env, { messages: plain });
  const replayed = await chat(env, { messages: plain, stream: true });
  assert.is(replayed.headers.get("x-gateway-cache"), "hit");
  assert.ok(replayed.text.trimEnd().endsWith("data: [DONE]"));
  const chunks = chunksOf(replayed.text);
  assert.is(
    chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""),
    at(stored.body, "choices", 0, "message", "content"),
  );
  assert.is(chunks.at(-1)?.usage?.cost, 0);
  assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === "stop"));

  const streamedFirst = [{ role: "user", content: question("streamed first") }];
  const live = await chat(env, { messages: streamedFirst, stream: true });
  assert.is(live.headers.get("x-gateway-cache"), "miss");
  const liveText = chunksOf(live.text)
    .map((c) => c.choices[0]?.delta?.content ?? "")
    .join("");
  const fromStream = await chat(env, { messages: streamedFirst });
  assert.is(fromStream.headers.get("x-gateway-cache"), "hit");
  assert.is(at(fromStream.body, "choices", 0, "message", "content"), liveText);
  assert.is(at(fromStream.body, "choices", 0, "finish_reason"), "stop");
  assert.is(upstreamCalls(env), 2);
});

test("the Responses and Messages formats are cached through the chat pipeline", async ({ env }) => {
  const post = (path: string, body: Record<string, unknown>) =>
    call(env.gw.url, "POST", path, {
      key: env.gw.key,
      headers: { "x-gateway-cache-ttl": "300" },
      body: { model: "mock/chat", ...body },
    });
  const input = question("responses");
  const first = await post("/api/v1/responses", { input });
  assert.is(first.headers.get("x-gateway-cache"), "miss", first.text);
  const again = await post("/api/v1/responses", { input });
  assert.is(again.headers.get("x-gateway-cache"), "hit");
  assert.is(at(again.body, "output", 0, "content", 0, "text"), at(first.body, "output", 0, "content", 0, "text"));
  const content = question("messages");
  assert.is(
    (await post("/api/v1/messages", { max_tokens: 100, messages: [{ role: "user", content }] })).headers.get(
      "x-gateway-cache",
    ),
    "miss",
  );
  const hit = await post("/api/v1/messages", { max_tokens: 100, messages: [{ role: "user", content }] });
  assert.is(hit.headers.get("x-gateway-cache"), "hit");
  assert.match(String(at(hit.body, "content", 0, "text")), /Hello from/);
  assert.is(upstreamCalls(env), 2);
});

test("a tool call is cached and replayed whole", async ({ env }) => {
  env.upstream.rule({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' }, times: 1 });
  const messages = [{ role: "user", content: question("tool") }];
  const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];
  await chat(env, { messages, tools, stream: true });
  const hit = await chat(env, { messages, tools });
  assert.is(hit.headers.get("x-gateway-cache"), "hit");
  assert.is(at(hit.body, "choices", 0, "finish_reason"), "tool_calls");
  assert.is(at(hit.body, "choices", 0, "message", "tool_calls", 0, "function", "arguments"), '{"city":"Paris"}');
});

test("Cache-Control: no-cache skips the lookup and refreshes the entry", async ({ env }) => {
  const messages = [{ role: "user", content: question("refresh") }];
  await chat(env, { messages });
  env.upstream.rule({ reply: "A fresher answer", times: 1 });
  const refreshed = await chat(env, { messages }, { "x-gateway-cache-ttl": "300", "cache-control": "no-cache" });
  assert.is(refreshed.headers.get("x-gateway-cache"), "bypass");
  assert.is(at(refreshed.body, "choices", 0, "message", "content"), "A fresher answer");
  const hit = await chat(env, { messages });
  assert.is(hit.headers.get("x-gateway-cache"), "hit");
  assert.is(at(hit.body, "choices", 0, "message", "content"), "A fresher answer");
  assert.is(upstreamCalls(env), 2);
});

test("a failed upstream answer is never cached", async ({ env }) => {
  const messages = [{ role: "user", content: question("failure") }];
  env.upstream.rule({ status: 400, times: 1 });
  assert.is((await chat(env, { messages })).status, 400);
  const next = await chat(env, { messages });
  assert.is(next.status, 200);
  assert.is(next.headers.get("x-gateway-cache"), "miss");
});

test("another workspace of the organization misses", async ({ env }) => {
  const { gw } = env;
  const workspace = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: { name: "Cache elsewhere", slug: `cache-${Date.now()}` },
  });
  assert.is(workspace.status, 201, workspace.text);
  const created = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "elsewhere", workspace_id: at(workspace.body, "data", "id") },
  });
  assert.is(created.status, 201, created.text);
  const elsewhere = String(at(created.body, "key"));
  const messages = [{ role: "user", content: question("workspaces") }];
  assert.is((await chat(env, { messages })).headers.get("x-gateway-cache"), "miss");
  assert.is((await chat(env, { messages }, undefined, elsewhere)).headers.get("x-gateway-cache"), "miss");
  assert.is((await chat(env, { messages }, undefined, elsewhere)).headers.get("x-gateway-cache"), "hit");
  assert.is(upstreamCalls(env), 2);
});

test("a hit costs nothing: GET /key usage does not move, and the ledger marks it with what it saved", async ({
  env,
}) => {
  const { gw } = env;
  const messages = [{ role: "user", content: question("billing") }];
  const miss = await chat(env, { messages });
  await gw.gateway.deps.engine.settlement.barrier();
  const before = at((await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body, "data", "usage") as number;
  const hit = await chat(env, { messages });
  assert.is(hit.headers.get("x-gateway-cache"), "hit");
  await gw.gateway.deps.engine.settlement.barrier();
  const after = at((await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body, "data", "usage") as number;
  assert.is(after, before);
  const [row] = await gw.gateway.deps.sequelize.query<{
    cost_usd: string;
    cache_hit: boolean;
    cache_savings_usd: string;
    prompt_tokens: number;
  }>(
    "SELECT cost_usd::text, cache_hit, cache_savings_usd::text, prompt_tokens " +
      "FROM usage_ledger WHERE generation_id = $1",
    { bind: [at(hit.body, "id")], type: "SELECT" as never },
  );
  assert.ok(row, "the hit has its ledger row");
  assert.is(Number(row!.cost_usd), 0);
  assert.ok(row!.cache_hit);
  assert.is(Number(row!.cache_savings_usd), at(miss.body, "usage", "cost"));
  assert.is(row!.prompt_tokens, at(miss.body, "usage", "prompt_tokens"));
  // The request log marks the hit, and what it saved.
  const generation = await call(gw.url, "GET", `/api/v1/generation?id=${String(at(hit.body, "id"))}`, { key: gw.key });
  assert.is(generation.status, 200, generation.text);
  assert.is(at(generation.body, "data", "svc_cache_hit"), true);
  assert.is(at(generation.body, "data", "usage"), 0);
  assert.is(at(generation.body, "data", "svc_cache_savings"), at(miss.body, "usage", "cost"));
  // Analytics reports the hits and what they saved.
  const day = new Date().toISOString().slice(0, 10);
  const analytics = await call(gw.url, "POST", "/api/v1/analytics/query", {
    key: gw.key,
    body: {
      start: `${day}T00:00:00Z`,
      end: new Date(Date.now() + 60_000).toISOString(),
      metrics: ["cache_hits", "cache_savings_usd"],
      dimensions: ["cache_hit"],
    },
  });
  assert.is(analytics.status, 200, analytics.text);
  const hits = (
    at(analytics.body, "data") as Array<{ cache_hit: boolean; cache_hits: number; cache_savings_usd: number }>
  ).find((r) => r.cache_hit);
  assert.ok(hits && hits.cache_hits >= 1 && hits.cache_savings_usd > 0, analytics.text);
});

test("embeddings: hit and miss, and base64 made from the stored float vectors", async ({ env }) => {
  const input = [question("embed a"), question("embed b")];
  const embed = (extra: Record<string, unknown> = {}) =>
    call(env.gw.url, "POST", "/api/v1/embeddings", {
      key: env.gw.key,
      headers: { "x-gateway-cache-ttl": "300" },
      body: { model: "mock/embed", input, ...extra },
    });
  const miss = await embed();
  assert.is(miss.headers.get("x-gateway-cache"), "miss");
  const hit = await embed({ encoding_format: "base64" });
  assert.is(hit.headers.get("x-gateway-cache"), "hit");
  const vector = at(miss.body, "data", 0, "embedding") as number[];
  const decoded = Buffer.from(String(at(hit.body, "data", 0, "embedding")), "base64");
  assert.is(decoded.readFloatLE(0), Math.fround(vector[0]!));
  assert.is(at(hit.body, "usage", "cost"), 0);
  assert.is(upstreamCalls(env), 1);
});

test(
  "a call refused after its lookup (a spent credit limit) " + "still lets an identical call of the workspace go on",
  async ({ env }) => {
    const { gw } = env;
    const poor = await call(gw.url, "POST", "/api/v1/keys", {
      key: gw.key,
      body: { name: "no credit", limit: 0.000000001 },
    });
    assert.is(poor.status, 201, poor.text);
    const messages = [{ role: "user", content: question("refused leader") }];
    const refused = await chat(env, { messages }, undefined, String(at(poor.body, "key")));
    assert.is(refused.status, 402, refused.text);
    // Its miss led the flight for this request; had the refusal not landed it, this call would wait
    // out the request timeout.
    const next = await chat(env, { messages });
    assert.is(next.status, 200, next.text);
    assert.is(next.headers.get("x-gateway-cache"), "miss");
  },
);

test("a workspace's default TTL caches the calls that ask for none; null removes it", async ({ env }) => {
  const { gw } = env;
  const workspaceId = String(
    at((await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body, "data", "workspace_id"),
  );
  const patch = (value: number | null) =>
    call(gw.url, "PATCH", `/api/v1/workspaces/${workspaceId}`, { key: gw.key, body: { svc_cache_ttl_seconds: value } });
  const set = await patch(120);
  assert.is(set.status, 200, set.text);
  assert.is(at(set.body, "data", "svc_cache_ttl_seconds"), 120);
  try {
    const messages = [{ role: "user", content: question("workspace default") }];
    assert.is((await chat(env, { messages }, {})).headers.get("x-gateway-cache"), "miss");
    assert.is((await chat(env, { messages }, {})).headers.get("x-gateway-cache"), "hit");
    assert.is((await patch(0)).status, 400, "a TTL is at least a second");
  } finally {
    const cleared = await patch(null);
    assert.is(at(cleared.body, "data", "svc_cache_ttl_seconds"), null);
  }
  assert.is(
    (await chat(env, { messages: [{ role: "user", content: question("no default") }] }, {})).headers.get(
      "x-gateway-cache",
    ),
    "bypass",
  );
});

test("a stampede of 20 identical calls makes one upstream call", async ({ env }) => {
  const messages = [{ role: "user", content: question("stampede") }];
  // The first call is held at the mock until every other one is waiting for it.
  let release!: () => void;
  env.upstream.rule({ until: new Promise<void>((resolve) => (release = resolve)), times: 1 });
  const calls = Array.from({ length: 20 }, () => chat(env, { messages }));
  await eventually(() => upstreamCalls(env), "the first call reaches the provider", { until: (n) => n >= 1 });
  // Time for the other 19 to reach the cache; one that came later would find the entry stored (a hit all the same).
  await new Promise((resolve) => setTimeout(resolve, 300));
  release();
  const answers = await Promise.all(calls);
  assert.ok(answers.every((res) => res.status === 200));
  assert.is(upstreamCalls(env), 1);
  assert.is(answers.filter((res) => res.headers.get("x-gateway-cache") === "hit").length, 19);
});

test.run();
