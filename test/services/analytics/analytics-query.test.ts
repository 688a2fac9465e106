import { randomUUID } from "node:crypto";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { settleCall, type CallRecord } from "../../../server/engine/usage/usage-store.js";
import { AnalyticsService } from "../../../gen/gateway/v1/analytics_pb.js";
import { bearer, createGrpcClient, grpcFailure } from "../../support/grpc-client.js";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";

/** POST /analytics/query over ledger rows written by settleCall. */
interface Ctx {
  gw: TestGateway;
  organizationId: string;
  workspaceId: string;
  keyA: string;
  keyB: string;
  plain: string;
  other: { organizationId: string; workspaceId: string; key: string };
}

const test = suite<Ctx>("analytics query");

type Json = Record<string, unknown>;
const QUERY = "/api/v1/analytics/query";
const MARCH = { start: "2024-03-01T00:00:00Z", end: "2024-04-01T00:00:00Z" };
/** Every metric callers may ask for, by the name they use. */
const METRIC_NAMES = [
  "requests",
  "prompt_tokens",
  "completion_tokens",
  "reasoning_tokens",
  "cached_tokens",
  "cache_write_tokens",
  "total_tokens",
  "cost_usd",
  "byok_cost_usd",
  "cache_hits",
  "cache_savings_usd",
  "avg_latency_ms",
  "p95_latency_ms",
  "error_rate",
  "tokens_per_second",
];

function record(
  base: Pick<CallRecord, "organizationId" | "keyHash" | "workspaceId">,
  fields: Partial<CallRecord>,
): CallRecord {
  return {
    generationId: `gen-${randomUUID()}`,
    memberUserId: null,
    endUser: null,
    sessionId: null,
    api: "chat",
    modelId: "acme/small",
    providerSlug: "acme",
    endpointId: null,
    status: "success",
    httpStatus: 200,
    streamed: false,
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    costUsd: "0",
    isByok: false,
    isFree: false,
    latencyMs: null,
    generationMs: null,
    reservationId: null,
    ...base,
    ...fields,
  };
}

test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  const own = await call(ctx.gw.url, "GET", "/api/v1/key", { key: ctx.gw.key });
  ctx.organizationId = at(own.body, "data", "organization_id") as string;
  ctx.workspaceId = at(own.body, "data", "workspace_id") as string;
  const created = await call(ctx.gw.url, "POST", "/api/v1/keys", {
    key: ctx.gw.key,
    body: { name: "analytics-plain" },
  });
  ctx.plain = at(created.body, "key") as string;
  ctx.keyA = "a".repeat(64);
  ctx.keyB = "b".repeat(64);
  ctx.other = await seedOrganization("analytics-other-org");

  const mine = (keyHash: string) => ({ organizationId: ctx.organizationId, keyHash, workspaceId: ctx.workspaceId });
  const rows: Array<[CallRecord, string]> = [
    [
      record(mine(ctx.keyA), {
        modelId: "acme/small",
        promptTokens: 100,
        completionTokens: 50,
        costUsd: "0.01",
        latencyMs: 100,
        generationMs: 1000,
        memberUserId: "user_1",
        endUser: "alice",
      }),
      "2024-03-04T10:00:00Z",
    ],
    [
      record(mine(ctx.keyA), {
        modelId: "acme/small",
        providerSlug: "beta",
        status: "error",
        httpStatus: 502,
        promptTokens: 100,
        latencyMs: 300,
      }),
      "2024-03-04T11:30:00Z",
    ],
    [
      record(mine(ctx.keyB), {
        modelId: "acme/large",
        promptTokens: 200,
        cachedTokens: 120,
        cacheWriteTokens: 30,
        completionTokens: 100,
        costUsd: "0.05",
        isByok: true,
        latencyMs: 200,
        generationMs: 2000,
        endUser: "bob",
      }),
      "2024-03-05T09:00:00Z",
    ],
    [
      record(mine(ctx.keyB), {
        modelId: "acme/embed",
        api: "embeddings",
        promptTokens: 1000,
        costUsd: "0.001",
        latencyMs: 50,
        generationMs: 60,
      }),
      "2024-03-05T09:45:00Z",
    ],
    [
      record(mine(ctx.keyA), {
        modelId: "acme/large",
        providerSlug: null,
        status: "cancelled",
        httpStatus: 499,
        promptTokens: 10,
        completionTokens: 5,
        costUsd: "0.002",
      }),
      "2024-03-11T08:00:00Z",
    ],
    // Outside March, and in the last 30 days.
    [record(mine(ctx.keyA), { modelId: "acme/old", costUsd: "7" }), "2024-02-29T23:59:59Z"],
    [
      record(mine(ctx.keyA), { modelId: "acme/recent", costUsd: "0.5" }),
      new Date(Date.now() - 3_600_000).toISOString(),
    ],
    [
      record(mine(ctx.keyA), { modelId: "acme/recent", costUsd: "0.25" }),
      new Date(Date.now() - 40 * 86_400_000).toISOString(),
    ],
    // Another organization's calls, on the same days and models.
    [
      record(
        { organizationId: ctx.other.organizationId, keyHash: "c".repeat(64), workspaceId: ctx.other.workspaceId },
        { modelId: "acme/small", costUsd: "100", promptTokens: 9999 },
      ),
      "2024-03-04T10:00:00Z",
    ],
    [
      record(
        { organizationId: ctx.other.organizationId, keyHash: "c".repeat(64), workspaceId: ctx.other.workspaceId },
        { modelId: "acme/recent", costUsd: "100" },
      ),
      new Date(Date.now() - 3_600_000).toISOString(),
    ],
  ];
  for (const [row, when] of rows) await settleCall(ctx.gw.gateway.sequelize, row, new Date(when));
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

async function query(gw: TestGateway, body: Json, key = gw.key): Promise<Json[]> {
  const res = await call(gw.url, "POST", QUERY, { key, body });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data") as Json[];
}

function assertError(res: Reply, status: number, message: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.match(String(at(res.body, "error", "message")), message, context);
}

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

test("string filters: eq, neq (keeps nulls), in, not_in, contains (any case)", async ({ gw, keyB }) => {
  const requests = async (filters: Json[]) =>
    (await query(gw, { ...MARCH, metrics: ["requests"], filters }))[0]!.requests;
  assert.is(await requests([{ dimension: "model", operator: "eq", value: "acme/small" }]), 2);
  assert.is(
    await requests([{ dimension: "provider", operator: "neq", value: "acme" }]),
    2,
    "beta and the call without provider",
  );
  assert.is(await requests([{ dimension: "model", operator: "in", value: ["acme/small", "acme/embed"] }]), 3);
  assert.is(await requests([{ dimension: "provider", operator: "not_in", value: ["beta"] }]), 4);
  assert.is(await requests([{ dimension: "model", operator: "in", value: [] }]), 0);
  assert.is(await requests([{ dimension: "model", operator: "contains", value: "LARGE" }]), 2);
  assert.is(await requests([{ dimension: "api_key", operator: "eq", value: keyB }]), 2);
  assert.is(await requests([{ dimension: "endpoint", operator: "eq", value: "embeddings" }]), 1);
  assert.is(
    await requests([
      { dimension: "end_user", operator: "eq", value: "alice" },
      { dimension: "member", operator: "eq", value: "user_1" },
    ]),
    1,
    "filters combine with AND",
  );
  assert.is(await requests([{ dimension: "is_byok", operator: "is", value: true }]), 1);
  assert.is(
    await requests([{ dimension: "model", operator: "eq", value: "x' OR '1'='1" }]),
    0,
    "values are data, never SQL",
  );
});

test("number operators filter groups by a metric's value", async ({ gw }) => {
  const models = async (operator: string, value: number) =>
    (
      await query(gw, {
        ...MARCH,
        metrics: ["requests"],
        dimensions: ["model"],
        filters: [{ dimension: "cost_usd", operator, value }],
      })
    ).map((r) => r.model);
  assert.equal(await models("gt", 0.002), ["acme/small"]);
  assert.equal(await models("gte", 0.002), ["acme/large", "acme/small"]);
  assert.equal(await models("lt", 0.002), ["acme/embed"]);
  assert.equal(await models("lte", 0.01), ["acme/large", "acme/small", "acme/embed"]);
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

test("bad input: unknown names, wrong value types and impossible ranges give 400 naming them", async ({ gw }) => {
  const cases: Array<[Json, RegExp]> = [
    [{ metrics: [] }, /metrics/],
    [{ metrics: ["bogus"] }, /Unknown metric 'bogus'/],
    [{ metrics: ["requests"], dimensions: ["country"] }, /Unknown dimension 'country'/],
    [{ metrics: ["requests"], granularity: "year" }, /Unknown granularity 'year'/],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "like", value: "x" }] },
      /filters\[0\]\.operator: unknown operator 'like'/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "country", operator: "eq", value: "x" }] },
      /filters\[0\]\.dimension: unknown dimension 'country'/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "eq", value: 3 }] },
      /filters\[0\]\.value must be a string/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "eq" }] },
      /filters\[0\]\.value must be a string/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "in", value: "acme/small" }] },
      /filters\[0\]\.value must be a list of strings/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "in", value: ["a", 1] }] },
      /filters\[0\]\.value\[1\] must be a string/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "cost_usd", operator: "gt", value: "1" }] },
      /filters\[0\]\.value must be a number/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "gt", value: 1 }] },
      /filters\[0\]\.dimension: operator 'gt' compares a metric/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "is_byok", operator: "eq", value: "true" }] },
      /filters\[0\]\.operator: dimension 'is_byok' is a boolean/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "model", operator: "is", value: true }] },
      /filters\[0\]\.operator: 'is' applies to boolean dimensions/,
    ],
    [
      { metrics: ["requests"], filters: [{ dimension: "is_byok", operator: "is", value: "yes" }] },
      /filters\[0\]\.value must be a boolean/,
    ],
    [{ metrics: ["requests"], start: "2024-03-02T00:00:00Z", end: "2024-03-01T00:00:00Z" }, /start must be before end/],
    [{ metrics: ["requests"], start: "yesterday" }, /start/],
    [{ metrics: ["requests"], limit: 0 }, /limit/],
  ];
  for (const [body, message] of cases)
    assertError(await call(gw.url, "POST", QUERY, { key: gw.key, body }), 400, message, JSON.stringify(body));
});

test("over gRPC, a time outside years 1–9999 (which REST's RFC 3339 text cannot carry) is a 400 naming it, not a 500", async ({
  gw,
}) => {
  const analytics = createGrpcClient(AnalyticsService, gw.grpcUrl);
  try {
    for (const [field, seconds] of [
      ["start", 300_000_000_000n],
      ["end", -70_000_000_000n],
    ] as const) {
      const failure = await grpcFailure(
        analytics.unary(
          AnalyticsService.method.queryAnalytics,
          { metrics: ["requests"], [field]: { seconds, nanos: 0 } },
          bearer(gw.key),
        ),
      );
      assert.is(failure.detail?.httpStatus, 400, failure.message);
      assert.match(failure.details, new RegExp(`${field} must be a time from 0001`));
    }
  } finally {
    analytics.close();
  }
});

test("every operator is accepted with a value of its type", async ({ gw }) => {
  const sample: Record<string, [string, unknown]> = {
    string: ["model", "acme/small"],
    string_list: ["model", ["acme/small"]],
    number: ["requests", 0],
    boolean: ["is_byok", false],
  };
  // Every operator callers may filter with, and the type of value it takes.
  const operators: Array<[string, string]> = [
    ["eq", "string"],
    ["neq", "string"],
    ["in", "string_list"],
    ["not_in", "string_list"],
    ["contains", "string"],
    ["gt", "number"],
    ["gte", "number"],
    ["lt", "number"],
    ["lte", "number"],
    ["is", "boolean"],
  ];
  for (const [name, valueType] of operators) {
    const [dimension, value] = sample[valueType]!;
    await query(gw, {
      ...MARCH,
      metrics: ["requests"],
      dimensions: ["model"],
      filters: [{ dimension, operator: name, value }],
    });
  }
});

test("management keys only: other keys get 403", async ({ gw, plain }) => {
  assertError(
    await call(gw.url, "POST", QUERY, { key: plain, body: { metrics: ["requests"] } }),
    403,
    /management keys/,
  );
  assertError(await call(gw.url, "POST", QUERY, { body: { metrics: ["requests"] } }), 401, /Authorization/);
});

test.run();
