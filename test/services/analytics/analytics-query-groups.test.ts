import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { type AnalyticsCtx, MARCH, METRIC_NAMES, query, startAnalyticsGateway } from "./analytics-query-fixture.js";

/** POST /analytics/query over ledger rows written by settleCall: metrics, groups, buckets, windows and tenancy. */
const test = suite<AnalyticsCtx>("analytics query: metrics and groups");

test.before(startAnalyticsGateway);
test.after(async (ctx) => {
  await ctx.gw.stop();
});

test("totals over a window: sums, costs apart from BYOK, rates and latency", async ({ gw }) => {
  const [row, ...rest] = await query(gw, { ...MARCH, metrics: METRIC_NAMES });
  assert.is(rest.length, 0, "no dimension and no granularity: one row");
  const { p95_latency_ms: p95, ...exact } = row!;
  // Interpolated between 200 and 300 ms in floating point.
  assert.ok(Math.abs((p95 as number) - 285) < 1e-9, `p95 ${p95}`);
  assert.equal(exact, {
    requests: 5,
    prompt_tokens: 1410,
    completion_tokens: 155,
    reasoning_tokens: 0,
    cached_tokens: 120,
    cache_write_tokens: 30,
    total_tokens: 1565,
    cost_usd: 0.013,
    byok_cost_usd: 0.05,
    avg_latency_ms: 162.5,
    error_rate: 0.2,
    tokens_per_second: 50,
    cache_hits: 0,
    cache_savings_usd: 0,
  });
});

test("an empty window: counts are zero, averages and rates null", async ({ gw }) => {
  const [row] = await query(gw, {
    start: "2019-01-01T00:00:00Z",
    end: "2019-02-01T00:00:00Z",
    metrics: ["requests", "cost_usd", "avg_latency_ms", "error_rate"],
  });
  assert.equal(row, { requests: 0, cost_usd: 0, avg_latency_ms: null, error_rate: null });
});

test("group by one and by two dimensions; rows ordered by the first metric, largest first", async ({ gw }) => {
  const byModel = await query(gw, { ...MARCH, metrics: ["requests", "cost_usd"], dimensions: ["model"] });
  assert.equal(byModel, [
    { model: "acme/large", requests: 2, cost_usd: 0.002 },
    { model: "acme/small", requests: 2, cost_usd: 0.01 },
    { model: "acme/embed", requests: 1, cost_usd: 0.001 },
  ]);
  const byProviderStatus = await query(gw, {
    ...MARCH,
    metrics: ["prompt_tokens"],
    dimensions: ["provider", "status"],
  });
  assert.equal(byProviderStatus, [
    { provider: "acme", status: "success", prompt_tokens: 1300 },
    { provider: "beta", status: "error", prompt_tokens: 100 },
    { provider: null, status: "cancelled", prompt_tokens: 10 },
  ]);
});

test("every dimension groups by its ledger column", async ({ gw, keyA, keyB, workspaceId }) => {
  const groups = async (dimension: string) =>
    (await query(gw, { ...MARCH, metrics: ["requests"], dimensions: [dimension] })).map((row) => [
      row[dimension],
      row.requests,
    ]);
  // Every dimension callers may group by, with March's groups (most requests first, ties by value).
  const expected: Record<string, unknown[][]> = {
    model: [
      ["acme/large", 2],
      ["acme/small", 2],
      ["acme/embed", 1],
    ],
    provider: [
      ["acme", 3],
      ["beta", 1],
      [null, 1],
    ],
    api_key: [
      [keyA, 3],
      [keyB, 2],
    ],
    workspace: [[workspaceId, 5]],
    member: [
      [null, 4],
      ["user_1", 1],
    ],
    end_user: [
      [null, 3],
      ["alice", 1],
      ["bob", 1],
    ],
    endpoint: [
      ["chat", 4],
      ["embeddings", 1],
    ],
    status: [
      ["success", 3],
      ["cancelled", 1],
      ["error", 1],
    ],
    is_byok: [
      [false, 4],
      [true, 1],
    ],
  };
  for (const [dimension, rows] of Object.entries(expected)) assert.equal(await groups(dimension), rows, dimension);
});

test("granularity adds a UTC bucket per row: hour, day, week (from Monday), month", async ({ gw }) => {
  const buckets = async (granularity: string, dimensions: string[] = []) =>
    query(gw, { ...MARCH, metrics: ["requests"], dimensions, granularity });
  assert.equal(await buckets("day"), [
    { bucket: "2024-03-04T00:00:00Z", requests: 2 },
    { bucket: "2024-03-05T00:00:00Z", requests: 2 },
    { bucket: "2024-03-11T00:00:00Z", requests: 1 },
  ]);
  assert.equal(await buckets("week"), [
    { bucket: "2024-03-04T00:00:00Z", requests: 4 },
    { bucket: "2024-03-11T00:00:00Z", requests: 1 },
  ]);
  assert.equal(await buckets("month"), [{ bucket: "2024-03-01T00:00:00Z", requests: 5 }]);
  assert.equal(
    (await buckets("hour")).map((r) => [r.bucket, r.requests]),
    [
      ["2024-03-04T10:00:00Z", 1],
      ["2024-03-04T11:00:00Z", 1],
      ["2024-03-05T09:00:00Z", 2],
      ["2024-03-11T08:00:00Z", 1],
    ],
  );
  assert.equal(await buckets("day", ["is_byok"]), [
    { bucket: "2024-03-04T00:00:00Z", is_byok: false, requests: 2 },
    { bucket: "2024-03-05T00:00:00Z", is_byok: false, requests: 1 },
    { bucket: "2024-03-05T00:00:00Z", is_byok: true, requests: 1 },
    { bucket: "2024-03-11T00:00:00Z", is_byok: false, requests: 1 },
  ]);
});

test("start is inclusive, end exclusive; without them, the last 30 days", async ({ gw }) => {
  const [edge] = await query(gw, { start: "2024-02-29T23:59:59Z", end: "2024-03-04T10:00:00Z", metrics: ["requests"] });
  assert.is(edge!.requests, 1, "the call at start counts, the one at end does not");
  const recent = await query(gw, { metrics: ["cost_usd"], dimensions: ["model"] });
  assert.equal(
    recent,
    [{ model: "acme/recent", cost_usd: 0.5 }],
    "the 40-day-old call and March 2024 are outside the default window",
  );
  const fromOnly = await query(gw, { start: "2024-03-11T00:00:00Z", metrics: ["requests"], dimensions: ["model"] });
  assert.equal(
    fromOnly.map((r) => [r.model, r.requests]),
    [
      ["acme/recent", 2],
      ["acme/large", 1],
    ],
    "from start until now",
  );
});

test("limit keeps the first rows in order", async ({ gw }) => {
  const rows = await query(gw, { ...MARCH, metrics: ["prompt_tokens"], dimensions: ["model"], limit: 2 });
  assert.equal(
    rows.map((r) => r.model),
    ["acme/embed", "acme/large"],
  );
});

test("another organization's calls never appear, and it sees only its own", async ({ gw, other }) => {
  const mine = await query(gw, { ...MARCH, metrics: ["cost_usd", "prompt_tokens"] });
  assert.equal(mine, [{ cost_usd: 0.013, prompt_tokens: 1410 }]);
  const theirs = await query(gw, { ...MARCH, metrics: ["cost_usd", "requests"], dimensions: ["model"] }, other.key);
  assert.equal(theirs, [{ model: "acme/small", cost_usd: 100, requests: 1 }]);
  const keys = await query(gw, {
    ...MARCH,
    metrics: ["requests"],
    dimensions: ["api_key"],
    filters: [{ dimension: "api_key", operator: "eq", value: "c".repeat(64) }],
  });
  assert.equal(keys, [], "filtering on their key finds nothing");
});

test.run();
