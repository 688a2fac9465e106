import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";

const test = suite<{ gw: TestGateway; plain: string; organizationId: string }>("organization-analytics");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  const created = await call(ctx.gw.url, "POST", "/api/v1/keys", { key: ctx.gw.key, body: { name: "plain" } });
  assert.is(created.status, 201, created.text);
  ctx.plain = at(created.body, "key") as string;
  const own = await call(ctx.gw.url, "GET", "/api/v1/key", { key: ctx.gw.key });
  ctx.organizationId = at(own.body, "data", "organization_id") as string;
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const SETTINGS = "/api/v1/organization/settings";
const META = "/api/v1/analytics/meta";

const getSettings = (gw: TestGateway, key = gw.key) => call(gw.url, "GET", SETTINGS, { key });
const patchSettings = (gw: TestGateway, body: unknown, key = gw.key) => call(gw.url, "PATCH", SETTINGS, { key, body });

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

// ---------------------------------------------------------------------------------------------
// Organization settings
// ---------------------------------------------------------------------------------------------

test("GET /organization/settings: exactly {id, is_filtered_model_catalog_enabled}, off by default", async ({
  gw,
  organizationId,
}) => {
  const res = await getSettings(gw);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { data: { id: organizationId, is_filtered_model_catalog_enabled: false } });
});

test("PATCH /organization/settings toggles the filtered catalog and GET reflects it", async ({
  gw,
  organizationId,
}) => {
  const on = await patchSettings(gw, { is_filtered_model_catalog_enabled: true });
  assert.is(on.status, 200, on.text);
  assert.equal(on.body, { data: { id: organizationId, is_filtered_model_catalog_enabled: true } });
  assert.equal((await getSettings(gw)).body, { data: { id: organizationId, is_filtered_model_catalog_enabled: true } });

  const again = await patchSettings(gw, { is_filtered_model_catalog_enabled: true });
  assert.is(at(again.body, "data", "is_filtered_model_catalog_enabled"), true, "setting the same value is allowed");

  const off = await patchSettings(gw, { is_filtered_model_catalog_enabled: false });
  assert.is(off.status, 200, off.text);
  assert.equal(off.body, { data: { id: organizationId, is_filtered_model_catalog_enabled: false } });
  assert.is(at((await getSettings(gw)).body, "data", "is_filtered_model_catalog_enabled"), false);
});

test("PATCH /organization/settings with an empty body changes nothing", async ({ gw, organizationId }) => {
  assert.is((await patchSettings(gw, { is_filtered_model_catalog_enabled: true })).status, 200);
  const empty = await patchSettings(gw, {});
  assert.is(empty.status, 200, empty.text);
  assert.equal(empty.body, { data: { id: organizationId, is_filtered_model_catalog_enabled: true } });
  assert.is(at((await getSettings(gw)).body, "data", "is_filtered_model_catalog_enabled"), true);
  assert.is((await patchSettings(gw, { is_filtered_model_catalog_enabled: false })).status, 200);
});

test("PATCH /organization/settings: non-boolean values and bad bodies give 400 and change nothing", async ({ gw }) => {
  for (const value of ["true", "yes", 1, 0, [true], { on: true }]) {
    assertError(
      await patchSettings(gw, { is_filtered_model_catalog_enabled: value }),
      400,
      /is_filtered_model_catalog_enabled/,
      JSON.stringify(value),
    );
  }
  for (const raw of ['{"is_filtered_model_catalog_enabled": ', "true", "[]"]) {
    assertError(await call(gw.url, "PATCH", SETTINGS, { key: gw.key, raw }), 400, undefined, raw);
  }
  assert.is(at((await getSettings(gw)).body, "data", "is_filtered_model_catalog_enabled"), false);
});

test("organization settings are per organization", async ({ gw, organizationId }) => {
  const other = await seedOrganization("settings-other-org");
  assert.is.not(other.organizationId, organizationId);

  assert.is((await patchSettings(gw, { is_filtered_model_catalog_enabled: true })).status, 200);
  const theirs = await getSettings(gw, other.key);
  assert.is(theirs.status, 200, theirs.text);
  assert.equal(
    theirs.body,
    { data: { id: other.organizationId, is_filtered_model_catalog_enabled: false } },
    "their settings are unchanged",
  );

  const theirOn = await patchSettings(gw, { is_filtered_model_catalog_enabled: true }, other.key);
  assert.equal(theirOn.body, { data: { id: other.organizationId, is_filtered_model_catalog_enabled: true } });
  assert.is((await patchSettings(gw, { is_filtered_model_catalog_enabled: false })).status, 200);
  assert.is(
    at((await getSettings(gw, other.key)).body, "data", "is_filtered_model_catalog_enabled"),
    true,
    "our change does not reach them",
  );
  assert.equal((await getSettings(gw)).body, {
    data: { id: organizationId, is_filtered_model_catalog_enabled: false },
  });
});

test("organization settings: non-management key 403, no key 401", async ({ gw, plain }) => {
  assertError(
    await patchSettings(gw, { is_filtered_model_catalog_enabled: true }, plain),
    403,
    /management keys/,
    "PATCH",
  );
  assertError(await getSettings(gw, plain), 403, /management keys/, "GET");
  assertError(
    await call(gw.url, "PATCH", SETTINGS, { body: { is_filtered_model_catalog_enabled: true } }),
    401,
    undefined,
    "PATCH",
  );
  assertError(await call(gw.url, "GET", SETTINGS), 401, undefined, "GET");
  assertError(
    await call(gw.url, "GET", SETTINGS, { headers: { authorization: "Bearer sk-gw-v1-nope" } }),
    401,
    undefined,
    "unknown key",
  );
  assert.is(at((await getSettings(gw)).body, "data", "is_filtered_model_catalog_enabled"), false, "nothing changed");
});

// ---------------------------------------------------------------------------------------------
// Analytics metadata
// ---------------------------------------------------------------------------------------------

test("GET /analytics/meta: management only (403 for other keys, 401 without a key)", async ({ gw, plain }) => {
  assertError(await call(gw.url, "GET", META, { key: plain }), 403, /management keys/);
  assertError(await call(gw.url, "GET", META), 401);
  assertError(await call(gw.url, "GET", META, { headers: { authorization: "Bearer sk-gw-v1-nope" } }), 401);
  const other = await seedOrganization("analytics-other-org");
  assert.is((await call(gw.url, "GET", META, { key: other.key })).status, 200, "any organization's management key");
});

test("GET /analytics/meta: four non-empty lists with exactly their fields and unique names", async ({ gw }) => {
  const res = await call(gw.url, "GET", META, { key: gw.key });
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body as object), ["data"]);
  const data = at(res.body, "data") as Record<string, unknown>;
  assert.equal(Object.keys(data).sort(), ["dimensions", "granularities", "metrics", "operators"]);

  const shapes: Record<string, Record<string, string>> = {
    dimensions: { name: "string", display_label: "string" },
    granularities: { name: "string", display_label: "string" },
    metrics: { name: "string", display_label: "string", display_format: "string", is_rate: "boolean" },
    operators: { name: "string", value_type: "string" },
  };
  for (const [list, shape] of Object.entries(shapes)) {
    const items = data[list] as Array<Record<string, unknown>>;
    assert.ok(Array.isArray(items), `${list} is an array`);
    assert.ok(items.length > 0, `${list} is not empty`);
    for (const item of items) {
      assert.equal(Object.keys(item).sort(), Object.keys(shape).sort(), `${list}: ${JSON.stringify(item)}`);
      for (const [field, type] of Object.entries(shape)) {
        assert.type(item[field], type as "string" | "boolean", `${list}.${field} of ${JSON.stringify(item)}`);
        if (type === "string") assert.ok(String(item[field]).length > 0, `${list}.${field} is not empty`);
      }
    }
    const names = items.map((item) => item.name as string);
    assert.is(new Set(names).size, names.length, `${list} names are unique: ${names.join(", ")}`);
  }
  const metrics = data.metrics as Array<Record<string, unknown>>;
  assert.ok(
    metrics.some((m) => m.is_rate === true),
    "some metric is a rate",
  );
  assert.ok(
    metrics.some((m) => m.is_rate === false),
    "some metric is not a rate",
  );
});

test("GET /analytics/meta: the names, labels and types callers rely on, in order", async ({ gw }) => {
  const res = await call(gw.url, "GET", META, { key: gw.key });
  assert.is(res.status, 200, res.text);
  assert.equal(at(res.body, "data", "metrics"), [
    { name: "requests", display_label: "Requests", display_format: "number", is_rate: false },
    { name: "prompt_tokens", display_label: "Prompt tokens", display_format: "number", is_rate: false },
    { name: "completion_tokens", display_label: "Completion tokens", display_format: "number", is_rate: false },
    { name: "reasoning_tokens", display_label: "Reasoning tokens", display_format: "number", is_rate: false },
    { name: "cached_tokens", display_label: "Cached prompt tokens", display_format: "number", is_rate: false },
    {
      name: "cache_write_tokens",
      display_label: "Prompt tokens written to cache",
      display_format: "number",
      is_rate: false,
    },
    { name: "total_tokens", display_label: "Total tokens", display_format: "number", is_rate: false },
    { name: "cost_usd", display_label: "Cost", display_format: "currency", is_rate: false },
    { name: "byok_cost_usd", display_label: "BYOK cost", display_format: "currency", is_rate: false },
    { name: "cache_hits", display_label: "Response cache hits", display_format: "number", is_rate: false },
    {
      name: "cache_savings_usd",
      display_label: "Saved by the response cache",
      display_format: "currency",
      is_rate: false,
    },
    { name: "avg_latency_ms", display_label: "Average latency", display_format: "duration_ms", is_rate: false },
    { name: "p95_latency_ms", display_label: "95th percentile latency", display_format: "duration_ms", is_rate: false },
    { name: "error_rate", display_label: "Error rate", display_format: "percent", is_rate: true },
    { name: "tokens_per_second", display_label: "Throughput (tokens/s)", display_format: "number", is_rate: true },
  ]);
  assert.equal(at(res.body, "data", "dimensions"), [
    { name: "model", display_label: "Model" },
    { name: "provider", display_label: "Provider" },
    { name: "api_key", display_label: "API key" },
    { name: "workspace", display_label: "Workspace" },
    { name: "member", display_label: "Member" },
    { name: "end_user", display_label: "End user" },
    { name: "endpoint", display_label: "API endpoint" },
    { name: "status", display_label: "Status" },
    { name: "is_byok", display_label: "BYOK" },
    { name: "cache_hit", display_label: "Response cache hit" },
    { name: "rate_limit", display_label: "Rate limit (of a 429)" },
  ]);
  assert.equal(at(res.body, "data", "granularities"), [
    { name: "hour", display_label: "Hourly" },
    { name: "day", display_label: "Daily" },
    { name: "week", display_label: "Weekly" },
    { name: "month", display_label: "Monthly" },
  ]);
  assert.equal(at(res.body, "data", "operators"), [
    { name: "eq", value_type: "string" },
    { name: "neq", value_type: "string" },
    { name: "in", value_type: "string_list" },
    { name: "not_in", value_type: "string_list" },
    { name: "contains", value_type: "string" },
    { name: "gt", value_type: "number" },
    { name: "gte", value_type: "number" },
    { name: "lt", value_type: "number" },
    { name: "lte", value_type: "number" },
    { name: "is", value_type: "boolean" },
  ]);
});

test.run();
