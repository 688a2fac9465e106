import { eventually } from "../support/eventually.js";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { chatItems, submit } from "../support/batches.js";
import { heldCall } from "../support/held-call.js";
import { at, call } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";

/**
 * `GET /metrics` (server/app/metrics*.ts): Prometheus text from this instance's own
 * registry, fed by real calls through the mock upstream, with labels that name route templates,
 * providers and models, never a path or a key; and its optional token.
 */
const HELLO = [{ role: "user", content: "Hi there" }];
const CHAT = "/api/v1/chat/completions";
/** How long the test holds the provider's answer: long enough to tell apart from the gateway's own work. */
const HOLD_MS = 200;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

/**
 * Prometheus text format 0.0.4, line by line: `# HELP`/`# TYPE` comments and `name{labels} value`
 * samples; anything else fails.
 */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      assert.match(
        line,
        new RegExp(`^# (HELP ${NAME} .*|TYPE ${NAME} (counter|gauge|histogram|summary|untyped))$`),
        `comment line: ${line}`,
      );
      continue;
    }
    const match = SAMPLE.exec(line);
    assert.ok(match, `sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? "";
    let consumed = 0;
    LABEL.lastIndex = 0;
    for (let label = LABEL.exec(body); label; label = LABEL.exec(body)) {
      labels[label[1]!] = label[2]!;
      consumed = LABEL.lastIndex;
    }
    assert.is(consumed, body.length, `labels of ${line}`);
    // Prometheus reads floats as Go's ParseFloat does: `NaN` in any case (prom-client writes `Nan`), `+Inf`, `-Inf`.
    const raw = match[3]!;
    const value = /^nan$/i.test(raw)
      ? Number.NaN
      : Number(raw.replace(/^\+Inf$/, "Infinity").replace(/^-Inf$/, "-Infinity"));
    assert.ok(!Number.isNaN(value) || /^nan$/i.test(raw), `value of ${line}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

/** The value of the one sample `name` whose labels include `labels`; 0 when there is none. */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

async function scrape(env: InferenceGateway, token?: string): Promise<{ text: string; samples: Sample[] }> {
  // Settlement is written behind: its flush lag is in once what was queued is committed.
  await env.gw.gateway.deps.engine.settlement.barrier();
  const res = await fetch(`${env.gw.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return { text, samples: parseExposition(text) };
}

function chat(env: InferenceGateway, body: Record<string, unknown> = {}) {
  return call(env.gw.url, "POST", CHAT, { key: env.gw.key, body: { model: "mock/chat", messages: HELLO, ...body } });
}

const GEN_AI = { gen_ai_operation_name: "chat", gen_ai_provider_name: "mockai", gen_ai_request_model: "mock/chat" };

// ---------------------------------------------------------------------------------------------

const test = suite<{ env: InferenceGateway }>("metrics: GET /metrics after real calls");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());

test("requests by route template, tokens, cost, latencies, overhead, refusals and process metrics", async ({ env }) => {
  // What the suite's other tests counted, whichever ran first: the counts below are this test's calls.
  const before = (await scrape(env)).samples;
  const held = await heldCall(env.upstream, () => chat(env), { forMs: HOLD_MS, rule: { model: "chat-a" } });
  assert.is(held.answer.status, 200);
  const heldSeconds = held.heldMs / 1000;
  assert.is((await chat(env, { stream: true })).status, 200);
  assert.is((await call(env.gw.url, "GET", "/api/v1/key")).status, 401);
  assert.is((await call(env.gw.url, "GET", "/api/v1/no-such-route-x7", { key: env.gw.key })).status, 404);
  const { text, samples } = await scrape(env);
  const added = (name: string, labels: Record<string, string> = {}) =>
    sampleValue(samples, name, labels) - sampleValue(before, name, labels);

  const route = { protocol: "rest", method: "POST", route: CHAT };
  assert.is(added("gateway_requests_total", { ...route, status: "200" }), 2);
  assert.is(
    added("gateway_requests_total", { protocol: "rest", method: "GET", route: "/api/v1/key", status: "401" }),
    1,
  );
  assert.is(
    added("gateway_requests_total", { protocol: "rest", method: "GET", route: "(unmatched)", status: "404" }),
    1,
  );
  assert.not.match(text, /no-such-route-x7/, "a raw path is never a label");
  assert.not.ok(text.includes(env.gw.key), "the key is never a label");

  assert.is(added("gateway_request_duration_seconds_count", route), 2);
  assert.is(added("gateway_overhead_seconds_count", route), 2);
  // The provider's wait is not the gateway's overhead: the time the test held the provider lies
  // within the requests' duration and outside their overhead, on a machine of any speed.
  const duration = added("gateway_request_duration_seconds_sum", route);
  const overhead = added("gateway_overhead_seconds_sum", route);
  assert.ok(
    overhead + heldSeconds <= duration,
    `overhead ${overhead} s + the ${heldSeconds} s the provider was held within ${duration} s`,
  );

  assert.ok(added("gen_ai_client_token_usage_sum", { ...GEN_AI, gen_ai_token_type: "input" }) > 0);
  assert.ok(added("gen_ai_client_token_usage_sum", { ...GEN_AI, gen_ai_token_type: "output" }) > 0);
  assert.is(added("gen_ai_client_token_usage_count", { ...GEN_AI, gen_ai_token_type: "input" }), 2);
  assert.ok(added("gateway_cost_usd_total", GEN_AI) > 0);
  assert.is(added("gen_ai_client_operation_duration_seconds_count", { ...GEN_AI, error_type: "" }), 2);
  assert.ok(
    added("gen_ai_client_operation_duration_seconds_sum", { ...GEN_AI, error_type: "" }) >= heldSeconds,
    "the provider's operations cover its wait",
  );
  assert.is(added("gen_ai_client_operation_time_to_first_chunk_seconds_count", GEN_AI), 1, "the streamed call only");

  assert.is(added("gateway_refusals_total", { reason: "unauthenticated", status: "401" }), 1);
  assert.ok(
    samples.some((s) => s.name === "gateway_refusals_total" && s.labels.reason === "budget" && s.value === 0),
    "known series start at 0",
  );
  assert.ok(
    sampleValue(samples, "gateway_lease_top_ups_total", { trigger: "on_demand", outcome: "granted" }) >= 1,
    "the first call's leases were granted on demand",
  );
  assert.ok(
    sampleValue(samples, "gateway_settlement_flush_lag_seconds_count") >= 2,
    "both calls' ledger rows were committed",
  );
  assert.is(sampleValue(samples, "gateway_batch_items", { state: "pending" }), 0);
  assert.ok(samples.some((s) => s.name === "gateway_batch_items" && s.labels.state === "succeeded"));
  assert.ok(sampleValue(samples, "process_cpu_user_seconds_total") > 0);
  assert.ok(sampleValue(samples, "nodejs_heap_size_total_bytes") > 0);
});

test("a fallback is counted by the provider that failed, with its status", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 503, times: 1 });
  const res = await chat(env);
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "provider"), "Backup");
  const { samples } = await scrape(env);
  assert.is(sampleValue(samples, "gateway_fallbacks_total", { ...GEN_AI, error_type: "503" }), 1);
  assert.is(
    sampleValue(samples, "gen_ai_client_operation_duration_seconds_count", { ...GEN_AI, error_type: "503" }),
    1,
  );
  assert.is(
    sampleValue(samples, "gen_ai_client_operation_duration_seconds_count", {
      ...GEN_AI,
      gen_ai_provider_name: "backup",
      error_type: "",
    }),
    1,
  );
});

test("an event stream being written is an open SSE stream until it ends", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", chunkDelayMs: 300, times: 1 });
  const res = await fetch(env.gw.url + CHAT, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "mock/chat", messages: HELLO, stream: true }),
  });
  assert.is(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read();
  assert.is(sampleValue((await scrape(env)).samples, "gateway_open_sse_streams"), 1);
  while (!(await reader.read()).done);
  // The facade forgets the stream once its last byte is written, just after the client has it.
  await eventually(
    async () => sampleValue((await scrape(env)).samples, "gateway_open_sse_streams"),
    "the ended stream is no longer open",
    { until: (open) => open === 0 },
  );
});

test.run();

// ---------------------------------------------------------------------------------------------

const TOKEN = "metrics-scraper-token-0123456789";
const RATE_LIMIT = 2;

const guarded = suite<{ env: InferenceGateway }>(
  "metrics: GATEWAY_METRICS_TOKEN, and refusals a provider did not make",
);
guarded.before(async (ctx) => {
  ctx.env = await startInferenceGateway({
    GATEWAY_METRICS_TOKEN: TOKEN,
    GATEWAY_RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
    GATEWAY_RATE_LIMIT_WINDOW_SECONDS: "3600",
  });
});
guarded.after(async (ctx) => ctx.env.stop());

guarded("without the token, or with another one, /metrics answers 401 in the error envelope", async ({ env }) => {
  const attempts: Array<Record<string, string>> = [
    {},
    { authorization: "Bearer not-the-token" },
    { authorization: `Bearer ${TOKEN}x` },
    { authorization: TOKEN },
  ];
  for (const headers of attempts) {
    const res = await call(env.gw.url, "GET", "/metrics", { headers });
    assert.is(res.status, 401, JSON.stringify(headers));
    assert.is(at(res.body, "error", "code"), 401);
    assert.match(String(at(res.body, "error", "message")), /GATEWAY_METRICS_TOKEN/);
    assert.not.ok(res.text.includes(TOKEN), "the token is never echoed");
  }
  const posted = await call(env.gw.url, "POST", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.is(posted.status, 405);
  assert.is(posted.headers.get("allow"), "GET, HEAD");
  await scrape(env, TOKEN);
});

guarded(
  "this instance's registry is its own; a provider's 429 is not a refusal, the rate limit's is",
  async ({ env }) => {
    for (const model of ["chat-a", "chat-b", "claude-x"]) env.upstream.rule({ model, status: 429, times: 1 });
    const busy = await chat(env);
    assert.is(busy.status, 429, busy.text);
    assert.is((await chat(env)).status, 200);
    const limited = await chat(env);
    assert.is(limited.status, 429, limited.text);
    const { samples } = await scrape(env, TOKEN);
    assert.is(
      sampleValue(samples, "gateway_requests_total", { protocol: "rest", method: "POST", route: CHAT, status: "429" }),
      2,
    );
    assert.is(
      sampleValue(samples, "gateway_requests_total", { protocol: "rest", method: "POST", route: CHAT, status: "200" }),
      1,
      "only this gateway's calls",
    );
    assert.is(sampleValue(samples, "gateway_refusals_total", { reason: "rate_limit", status: "429" }), 1);
    assert.is(sampleValue(samples, "gateway_fallbacks_total", { ...GEN_AI, error_type: "429" }), 1);
  },
);

guarded.run();

// ---------------------------------------------------------------------------------------------

const batches = suite<{ env: InferenceGateway }>("metrics: batch items by state");
batches.before(async (ctx) => {
  // No engine: the items stay pending.
  ctx.env = await startInferenceGateway({ GATEWAY_BATCH_CONCURRENCY: "0" });
});
batches.after(async (ctx) => ctx.env.stop());

batches("the items of a running batch are counted from the database", async ({ env }) => {
  const res = await submit(env.gw.url, env.gw.key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(3),
  });
  assert.is(res.status, 202, res.text);
  const { samples } = await scrape(env);
  assert.equal(
    ["pending", "running", "succeeded", "failed"].map((state) =>
      sampleValue(samples, "gateway_batch_items", { state }),
    ),
    [3, 0, 0, 0],
  );
});

batches.run();
