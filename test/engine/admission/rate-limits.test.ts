import { QueryTypes, type Sequelize } from "sequelize";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { suite } from "../../support/suite.js";
import { newKey } from "./support.js";

/**
 * Requests and tokens per minute of keys and workspaces (`svc_rate_limit`, docs/api/limits.md),
 * admitted from leases by two gateway instances on one database (this process and a child): the
 * limits hold for both together, a 429 names the limit and carries Retry-After and OpenAI's
 * x-ratelimit-* headers, which every inference answer carries too; bad values are 400s.
 *
 * Each call here is exactly 12 tokens, reserved and used: the prompt "Hi!!" is estimated at 6
 * (cost-estimate.ts: a quarter of the text's 8 characters, role included, plus 4 per message) and
 * max_tokens is 6; the provider reports 6 + 6. Fixed one-minute windows may turn while a test runs,
 * so what is counted per window is grouped by the window each answer names (its reset header).
 */
const TWELVE_TOKENS = {
  model: "mock/chat",
  messages: [{ role: "user", content: "Hi!!" }],
  provider: { only: ["mockai"] },
  max_tokens: 6,
};
const settings = { GATEWAY_LEASE_TOPUP_MS: "50" };

const test = suite<{ env: InferenceGateway; second: GatewayProcess }>(
  "rate limits of keys and workspaces across instances",
);
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway(settings);
  ctx.second = await startGatewayProcess({
    databaseUrl: ctx.env.gw.databaseUrl,
    key: ctx.env.gw.key,
    env: { ...settings, GATEWAY_CONFIG: ctx.env.configFile, MOCK_UPSTREAM_KEY: ctx.env.upstream.apiKey },
  });
});
test.after(async (ctx) => {
  await ctx.second?.stop();
  await ctx.env.stop();
});
test.before.each(({ env }) => {
  env.upstream.reset();
  env.upstream.rule({ usage: { prompt_tokens: 6, completion_tokens: 6 }, delayMs: 10 });
});

function chat(base: string, key: string, body: Record<string, unknown> = {}): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", { key, body: { ...TWELVE_TOKENS, ...body } });
}

/** Go's duration text (`1m0s`, `59.5s`, `20ms`) in milliseconds. */
function durationMs(text: string | null): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:([\d.]+)s)?(?:(\d+)ms)?$/.exec(text ?? "");
  assert.ok(match && text, `a duration: ${text}`);
  const [, h = "0", m = "0", s = "0", ms = "0"] = match;
  return Number(h) * 3_600_000 + Number(m) * 60_000 + Number(s) * 1000 + Number(ms);
}

/** An answer and the one-minute window it was admitted or refused in: the end its reset header names. */
async function windowed(reply: Promise<Reply>, header: string): Promise<{ res: Reply; window: number }> {
  const res = await reply;
  return { res, window: Math.round((Date.now() + durationMs(res.headers.get(header))) / 60_000) };
}

function servedPerWindow(results: ReadonlyArray<{ res: Reply; window: number }>): Map<number, number> {
  const served = new Map<number, number>();
  for (const { res, window } of results) if (res.status === 200) served.set(window, (served.get(window) ?? 0) + 1);
  return served;
}

/** What the request counters of `quantity` settled, by window (both instances' settlements). */
async function counted(sequelize: Sequelize, quantity: string): Promise<number[]> {
  const rows = await sequelize.query<{ count: number }>(
    "SELECT count FROM request_counters WHERE name = :quantity ORDER BY window_start",
    {
      type: QueryTypes.SELECT,
      replacements: { quantity },
    },
  );
  return rows.map((r) => r.count);
}

test(
  "a key limited to 120 tokens a minute is served at most 10 calls of 12 tokens by two instances together, " +
    "then 429 with Retry-After and the tokens left",
  async ({ env, second }) => {
    const { key, hash } = await newKey(env.gw.url, env.gw.key, { svc_rate_limit: { tokens_per_minute: 120 } });
    const bases = [env.gw.url, second.url];
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => windowed(chat(bases[i % 2]!, key), "x-ratelimit-reset-tokens")),
    );
    const served = servedPerWindow(results);
    for (const [window, n] of served) assert.ok(n <= 10, `${n} calls served in window ${window}`);
    const total = [...served.values()].reduce((a, b) => a + b, 0);
    assert.ok(total >= 5, `${total} calls served: slices held by one instance leave the other at least half`);
    for (const { res } of results) {
      assert.is(res.headers.get("x-ratelimit-limit-tokens"), "120", res.text);
      if (res.status === 200) continue;
      assert.is(res.status, 429, res.text);
      assert.match(
        String(at(res.body, "error", "message")),
        /this key's limit of 120 tokens per minute \(svc_rate_limit\.tokens_per_minute\) has \d+ left and this request may use up to 12 tokens/,
      );
      const retryAfter = Number(res.headers.get("retry-after"));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
      const remaining = Number(res.headers.get("x-ratelimit-remaining-tokens"));
      assert.ok(Number.isInteger(remaining) && remaining < 12, `x-ratelimit-remaining-tokens ${remaining}`);
    }
    // Settled centrally: 12 tokens per call served, never more than the limit in a window.
    const tokens = await eventually(
      () => counted(env.gw.gateway.sequelize, `rate:key:${hash}:tokens`),
      "every served call settles",
      {
        until: (c) => c.reduce((a, b) => a + b, 0) === 12 * total,
      },
    );
    for (const n of tokens) assert.ok(n <= 120, `${n} tokens in one window`);
  },
);

test("the 429s of a limit are ledger rows that analytics groups by limit, and a metric counts them", async ({
  env,
  second,
}) => {
  const { key, hash } = await newKey(env.gw.url, env.gw.key, { svc_rate_limit: { requests_per_minute: 1 } });
  const results = await Promise.all([env.gw.url, env.gw.url, second.url, second.url].map((base) => chat(base, key)));
  const refused = results.filter((r) => r.status === 429).length;
  assert.ok(refused >= 2, `${refused} refused`);
  const query = {
    metrics: ["requests"],
    dimensions: ["rate_limit"],
    filters: [{ dimension: "api_key", operator: "eq", value: hash }],
  };
  const rows = await eventually(
    () => call(env.gw.url, "POST", "/api/v1/analytics/query", { key: env.gw.key, body: query }),
    "both instances' refusals are written",
    {
      until: (res) => {
        const groups = at(res.body, "data") as Array<Record<string, unknown>>;
        return (
          groups.some((row) => row.rate_limit === "key_requests" && row.requests === refused) &&
          groups.some((row) => row.rate_limit === null && row.requests === 4 - refused)
        );
      },
    },
  );
  assert.equal(
    (at(rows.body, "data") as Array<Record<string, unknown>>).map((row) => [row.rate_limit, row.requests]).sort(),
    [
      ["key_requests", refused],
      [null, 4 - refused],
    ].sort(),
  );
  const metrics = await call(env.gw.url, "GET", "/metrics");
  const sample = /^gateway_rate_limit_refusals_total\{limit="key_requests"\} (\d+)$/m.exec(metrics.text);
  assert.ok(sample && Number(sample[1]) >= 1, "this instance counted its refusals");
});

test("a workspace limited to 5 requests a minute is held for all its keys together", async ({ env, second }) => {
  const created = await call(env.gw.url, "POST", "/api/v1/workspaces", {
    key: env.gw.key,
    body: {
      name: "Paced",
      slug: `paced-${Math.random().toString(36).slice(2, 8)}`,
      svc_rate_limit: { requests_per_minute: 5 },
    },
  });
  assert.is(created.status, 201, created.text);
  const workspace = String(at(created.body, "data", "id"));
  const keys = await Promise.all([1, 2, 3].map(() => newKey(env.gw.url, env.gw.key, { workspace_id: workspace })));
  const bases = [env.gw.url, second.url];
  const results = await Promise.all(
    Array.from({ length: 15 }, (_, i) => windowed(chat(bases[i % 2]!, keys[i % 3]!.key), "x-ratelimit-reset-requests")),
  );
  const served = servedPerWindow(results);
  for (const [window, n] of served) assert.ok(n <= 5, `${n} calls served in window ${window}`);
  for (const { res } of results) {
    assert.is(res.headers.get("x-ratelimit-limit-requests"), "5", "the workspace's limit is the tightest");
    if (res.status === 200) continue;
    assert.is(res.status, 429, res.text);
    assert.match(
      String(at(res.body, "error", "message")),
      /this key's workspace's limit of 5 requests per minute \(svc_rate_limit\.requests_per_minute\) is reached/,
    );
    assert.ok(Number(res.headers.get("retry-after")) >= 1);
  }
  const other = await newKey(env.gw.url, env.gw.key);
  assert.is((await chat(env.gw.url, other.key)).status, 200, "a key of another workspace is not held");
});

test("a response cache hit counts against the request limit only", async ({ env }) => {
  const { key } = await newKey(env.gw.url, env.gw.key, {
    svc_rate_limit: { requests_per_minute: 4, tokens_per_minute: 24 },
  });
  const cached = { headers: { "x-gateway-cache-ttl": "300" } };
  const body = {
    ...TWELVE_TOKENS,
    messages: [{ role: "user", content: `Hi${Math.random().toString(36).slice(2, 4)}` }],
  };
  const ask = () =>
    windowed(
      call(env.gw.url, "POST", "/api/v1/chat/completions", { key, body, ...cached }),
      "x-ratelimit-reset-requests",
    );
  const first = await ask();
  assert.is(first.res.status, 200, first.res.text);
  const hit = await ask();
  assert.is(hit.res.headers.get("x-gateway-cache"), "hit");
  if (hit.window === first.window)
    assert.is(hit.res.headers.get("x-ratelimit-remaining-requests"), "2", "the hit counted one request");
  assert.is(hit.res.headers.get("x-ratelimit-limit-tokens"), null, "and no token limit");
  // The answers above used 12 of the 24 tokens, so another call of 12 is admitted within the same window.
  const fresh = await windowed(chat(env.gw.url, key), "x-ratelimit-reset-requests");
  if (fresh.window === first.window) {
    assert.is(fresh.res.status, 200, fresh.res.text);
    assert.is(fresh.res.headers.get("x-ratelimit-remaining-tokens"), "0");
  }
});

test("every inference answer carries the six headers of the tightest limits, plain and streamed", async ({ env }) => {
  const { key } = await newKey(env.gw.url, env.gw.key, {
    svc_rate_limit: { requests_per_minute: 50, tokens_per_minute: 100_000 },
  });
  const post = (path: string, body: Record<string, unknown>) =>
    call(env.gw.url, "POST", path, { key, body: { model: "mock/chat", ...body } });
  const answers: Array<[string, Reply]> = [
    ["chat", await chat(env.gw.url, key)],
    ["chat streamed", await chat(env.gw.url, key, { stream: true })],
    ["embeddings", await post("/api/v1/embeddings", { model: "mock/embed", input: "hello" })],
    ["responses", await post("/api/v1/responses", { input: "Hi", max_output_tokens: 20 })],
    ["responses streamed", await post("/api/v1/responses", { input: "Hi", max_output_tokens: 20, stream: true })],
    ["messages", await post("/api/v1/messages", { max_tokens: 20, messages: [{ role: "user", content: "Hi" }] })],
    [
      "messages streamed",
      await post("/api/v1/messages", { max_tokens: 20, messages: [{ role: "user", content: "Hi" }], stream: true }),
    ],
  ];
  for (const [what, res] of answers) {
    assert.is(res.status, 200, `${what}: ${res.text}`);
    assert.is(res.headers.get("x-ratelimit-limit-requests"), "50", what);
    assert.is(res.headers.get("x-ratelimit-limit-tokens"), "100000", what);
    // The call itself is counted: what is left is below the limit.
    assert.ok(Number(res.headers.get("x-ratelimit-remaining-requests")) < 50, what);
    assert.ok(Number(res.headers.get("x-ratelimit-remaining-tokens")) < 100_000, what);
    for (const reset of ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"])
      assert.ok(durationMs(res.headers.get(reset)) <= 60_000, `${what}: ${reset}`);
  }
  const plain = await newKey(env.gw.url, env.gw.key);
  const res = await chat(env.gw.url, plain.key);
  assert.is(
    res.headers.get("x-ratelimit-limit-requests"),
    "600",
    "without limits of its own, the gateway's default applies",
  );
  assert.is(res.headers.get("x-ratelimit-limit-tokens"), null, "no token limit applies: no token headers");
});

test("a request whose worst case alone passes the token limit is refused for good", async ({ env }) => {
  const { key } = await newKey(env.gw.url, env.gw.key, { svc_rate_limit: { tokens_per_minute: 100 } });
  const res = await chat(env.gw.url, key, { max_tokens: undefined });
  assert.is(res.status, 429, res.text);
  assert.match(
    String(at(res.body, "error", "message")),
    /Request too large: it may use up to 1006 tokens .* this key's limit of 100 tokens per minute/,
  );
  assert.is(res.headers.get("x-should-retry"), "false");
  assert.is(res.headers.get("retry-after"), null);
  assert.is((await chat(env.gw.url, key)).status, 200, "with max_tokens the same prompt fits");
});

test.run();
