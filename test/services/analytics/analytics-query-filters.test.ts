import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { AnalyticsService } from "../../../gen/gateway/v1/analytics_pb.js";
import { bearer, createGrpcClient, grpcFailure } from "../../support/grpc-client.js";
import { call } from "../../support/http.js";
import {
  type AnalyticsCtx,
  assertError,
  type Json,
  MARCH,
  QUERY,
  query,
  startAnalyticsGateway,
} from "./analytics-query-fixture.js";

/** POST /analytics/query over ledger rows written by settleCall: filters, refused input and who may ask. */
const test = suite<AnalyticsCtx>("analytics query: filters and refusals");

test.before(startAnalyticsGateway);
test.after(async (ctx) => {
  await ctx.gw.stop();
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

test(
  "over gRPC, a time outside years 1–9999 (which REST's RFC 3339 text cannot carry) " + "is a 400 naming it, not a 500",
  async ({ gw }) => {
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
  },
);

test("management keys only: other keys get 403", async ({ gw, plain }) => {
  assertError(
    await call(gw.url, "POST", QUERY, { key: plain, body: { metrics: ["requests"] } }),
    403,
    /management keys/,
  );
  assertError(await call(gw.url, "POST", QUERY, { body: { metrics: ["requests"] } }), 401, /Authorization/);
});

test.run();
