import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import { at, call } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";

const test = suite<{ gw: TestGateway }>("keys");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const createKey = (gw: TestGateway, body: Record<string, unknown>) =>
  call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body });

test("GET /key returns every field of 2.3 for the bootstrap management key", async ({ gw }) => {
  const res = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.is(res.status, 200);
  const data = at(res.body, "data") as Record<string, unknown>;
  const fields = [
    "label",
    "limit",
    "limit_remaining",
    "limit_reset",
    "usage",
    "usage_daily",
    "usage_weekly",
    "usage_monthly",
    "byok_usage",
    "byok_usage_daily",
    "byok_usage_weekly",
    "byok_usage_monthly",
    "include_byok_in_limit",
    "is_free_tier",
    "is_management_key",
    "is_provisioning_key",
    "expires_at",
    "creator_user_id",
    "organization_id",
    "workspace_id",
    "allowed_data_regions",
    "free_model_daily_requests",
    "rate_limit",
    "budgets",
    "effective_budget",
  ];
  for (const field of fields) assert.ok(field in data, `missing ${field}`);
  assert.is(data.limit, null);
  assert.is(data.limit_remaining, null);
  assert.is(data.limit_reset, null);
  assert.is(data.expires_at, null);
  assert.is(data.usage, 0);
  assert.is(data.is_management_key, true);
  assert.is(data.effective_budget, null);
  assert.equal(data.budgets, []);
  assert.equal(data.free_model_daily_requests, { limit: 50, remaining: 50, used: 0 });
  assert.match(String(data.label), /^sk-gw-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{3}$/);
  assert.not.ok(res.text.includes(gw.key), "the secret never appears in a response");
});

test("missing, malformed and unknown keys get 401", async ({ gw }) => {
  const variants: Record<string, string>[] = [
    {},
    { authorization: "Basic abc" },
    { authorization: "Bearer sk-gw-v1-nope" },
  ];
  for (const headers of variants) {
    const res = await call(gw.url, "GET", "/api/v1/key", { headers });
    assert.is(res.status, 401);
    assert.is(at(res.body, "error", "code"), 401);
    assert.type(at(res.body, "error", "message"), "string");
  }
});

test("create returns the secret once; the new key works and reports its limit", async ({ gw }) => {
  const member = await call(gw.url, "POST", "/api/v1/organization/members", {
    key: gw.key,
    body: { email: "ci-owner@example.com" },
  });
  assert.is(member.status, 201, member.text);
  const memberId = at(member.body, "data", "id") as string;
  const created = await createKey(gw, {
    name: "ci",
    limit: 12.5,
    limit_reset: "weekly",
    include_byok_in_limit: true,
    creator_user_id: memberId,
  });
  assert.is(created.status, 201);
  const secret = at(created.body, "key") as string;
  assert.match(secret, /^sk-gw-v1-[0-9a-f]{64}$/);
  assert.is(at(created.body, "data", "limit"), 12.5);
  assert.is(at(created.body, "data", "limit_reset"), "weekly");
  assert.is(at(created.body, "data", "is_management_key"), false);
  assert.is(at(created.body, "data", "updated_at"), null);
  const hash = at(created.body, "data", "hash") as string;

  const own = await call(gw.url, "GET", "/api/v1/key", { key: secret });
  assert.is(own.status, 200);
  assert.is(at(own.body, "data", "limit"), 12.5);
  assert.is(at(own.body, "data", "limit_remaining"), 12.5);
  assert.is(at(own.body, "data", "creator_user_id"), memberId);
  assert.is(at(own.body, "data", "budgets", 0, "scope"), "key");
  assert.is(at(own.body, "data", "budgets", 0, "reset_interval"), "weekly");
  assert.is(at(own.body, "data", "budgets", 0, "include_byok"), true);
  assert.is(at(own.body, "data", "effective_budget", "limit_usd"), 12.5);

  const fetched = await call(gw.url, "GET", `/api/v1/keys/${hash}`, { key: gw.key });
  assert.is(fetched.status, 200);
  assert.is(at(fetched.body, "key"), undefined, "the secret is shown only at creation");
  assert.is(at(fetched.body, "data", "name"), "ci");
});

test("management-only operations answer 403 to other keys", async ({ gw }) => {
  const secret = at((await createKey(gw, { name: "plain" })).body, "key") as string;
  for (const [method, path, body] of [
    ["GET", "/api/v1/keys", undefined],
    ["POST", "/api/v1/keys", { name: "x" }],
    ["POST", "/api/v1/workspaces", { name: "x", slug: "x" }],
    ["PATCH", "/api/v1/organization/settings", { is_filtered_model_catalog_enabled: true }],
    ["GET", "/api/v1/analytics/meta", undefined],
    ["GET", "/api/v1/end-users/someone", undefined],
  ] as const) {
    const res = await call(gw.url, method, path, { key: secret, body });
    assert.is(res.status, 403, `${method} ${path}`);
    assert.match(String(at(res.body, "error", "message")), /management keys/);
  }
});

test("PATCH changes only the fields sent; null clears the limit; disabled keys get 401", async ({ gw }) => {
  const created = await createKey(gw, { name: "patch-me", limit: 3 });
  const hash = at(created.body, "data", "hash") as string;
  const secret = at(created.body, "key") as string;

  const renamed = await call(gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: gw.key, body: { name: "renamed" } });
  assert.is(renamed.status, 200);
  assert.is(at(renamed.body, "data", "name"), "renamed");
  assert.is(at(renamed.body, "data", "limit"), 3, "an omitted field keeps its value");
  assert.type(at(renamed.body, "data", "updated_at"), "string");

  const cleared = await call(gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: gw.key, body: { limit: null } });
  assert.is(at(cleared.body, "data", "limit"), null);
  assert.is(at(cleared.body, "data", "name"), "renamed");

  const disabled = await call(gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: gw.key, body: { disabled: true } });
  assert.is(at(disabled.body, "data", "disabled"), true);
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key: secret })).status, 401);

  const listed = await call(gw.url, "GET", "/api/v1/keys", { key: gw.key });
  assert.not.ok(
    (at(listed.body, "data") as Array<{ hash: string }>).some((k) => k.hash === hash),
    "disabled keys are hidden by default",
  );
  const all = await call(gw.url, "GET", "/api/v1/keys?include_disabled=true", { key: gw.key });
  assert.ok((at(all.body, "data") as Array<{ hash: string }>).some((k) => k.hash === hash));
});

test("expired keys get 401; expiry must lie in the future", async ({ gw }) => {
  const past = await createKey(gw, { name: "old", expires_at: "2020-01-01T00:00:00Z" });
  assert.is(past.status, 400);
  assert.match(String(at(past.body, "error", "message")), /expires_at/);

  // An expiry an hour away is still ahead when the key is first used, however slow the machine;
  // the API only takes future ones, so the test then moves it into the past in the database.
  const created = await createKey(gw, { name: "later", expires_at: new Date(Date.now() + 3_600_000).toISOString() });
  assert.is(created.status, 201);
  const secret = at(created.body, "key") as string;
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key: secret })).status, 200);
  await gw.gateway.sequelize.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE hash = :hash", {
    replacements: { hash: at(created.body, "data", "hash") },
  });
  // A write behind the API's back reaches the key cache through the change feed (NOTIFY), a moment later.
  const expired = await eventually(
    () => call(gw.url, "GET", "/api/v1/key", { key: secret }),
    "the expired key is refused",
    { until: (res) => res.status !== 200 },
  );
  assert.is(expired.status, 401);
  assert.match(String(at(expired.body, "error", "message")), /expired/);
});

test("DELETE removes a key; its secret stops working; a second delete is 404", async ({ gw }) => {
  const created = await createKey(gw, { name: "bye" });
  const hash = at(created.body, "data", "hash") as string;
  const deleted = await call(gw.url, "DELETE", `/api/v1/keys/${hash}`, { key: gw.key });
  assert.is(deleted.status, 200);
  assert.equal(deleted.body, { deleted: true });
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key: at(created.body, "key") as string })).status, 401);
  assert.is((await call(gw.url, "DELETE", `/api/v1/keys/${hash}`, { key: gw.key })).status, 404);
});

test("bad input: each field's type and rules give 400 naming the field", async ({ gw }) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /name is required/],
    [{ name: 42 }, /name must be a string/],
    [{ name: "x".repeat(101) }, /name must be at most 100/],
    [{ name: "x", limit: "ten" }, /limit must be a number/],
    [{ name: "x", limit: -1 }, /limit must be at least 0/],
    [{ name: "x", limit_reset: "yearly" }, /limit_reset must be one of: daily, weekly, monthly/],
    [{ name: "x", include_byok_in_limit: "yes" }, /include_byok_in_limit must be a boolean/],
    [{ name: "x", expires_at: "tomorrow" }, /expires_at must be an ISO 8601/],
    [{ name: "x", workspace_id: "not-a-uuid" }, /workspace_id must be a UUID/],
  ];
  for (const [body, message] of cases) {
    const res = await createKey(gw, body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.match(String(at(res.body, "error", "message")), message);
  }
  assert.is((await call(gw.url, "GET", "/api/v1/keys/not-hex", { key: gw.key })).status, 400);
  assert.is((await call(gw.url, "GET", "/api/v1/keys?offset=-1", { key: gw.key })).status, 400);
  assert.is((await call(gw.url, "GET", "/api/v1/keys?limit=abc", { key: gw.key })).status, 400);
});

test("keys of another organization are invisible (404), and its workspaces cannot be targeted", async ({ gw }) => {
  const other = await seedOrganization("other-org");
  const theirs = await call(gw.url, "POST", "/api/v1/keys", { key: other.key, body: { name: "theirs" } });
  const hash = at(theirs.body, "data", "hash") as string;
  assert.is((await call(gw.url, "GET", `/api/v1/keys/${hash}`, { key: gw.key })).status, 404);
  assert.is((await call(gw.url, "PATCH", `/api/v1/keys/${hash}`, { key: gw.key, body: { name: "mine" } })).status, 404);
  assert.is((await call(gw.url, "DELETE", `/api/v1/keys/${hash}`, { key: gw.key })).status, 404);
  const listed = await call(gw.url, "GET", "/api/v1/keys", { key: gw.key });
  assert.not.ok((at(listed.body, "data") as Array<{ hash: string }>).some((k) => k.hash === hash));
  const cross = await createKey(gw, { name: "cross", workspace_id: other.workspaceId });
  assert.is(cross.status, 404);
});

test.run();
