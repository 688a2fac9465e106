import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { WorkspaceRow } from "../../../server/platform/db/models.js";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID, WORKSPACE_FIELDS } from "../../support/shapes.js";

const test = suite<{ gw: TestGateway }>("workspaces");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const SERVER_TOOLS = [
  "svc:advisor",
  "svc:apply_patch",
  "svc:bash",
  "svc:datetime",
  "svc:fusion",
  "svc:image_generation",
  "svc:experimental__search_models",
  "svc:shell",
  "svc:subagent",
  "svc:tool_search",
  "svc:web_fetch",
  "svc:web_search",
];

let counter = 0;
const uniqueSlug = (prefix: string) => `${prefix}-${++counter}`;

const createWorkspace = (gw: TestGateway, body: Record<string, unknown>, key = gw.key) =>
  call(gw.url, "POST", "/api/v1/workspaces", { key, body });

async function newWorkspace(gw: TestGateway, prefix: string): Promise<{ id: string; slug: string }> {
  const slug = uniqueSlug(prefix);
  const res = await createWorkspace(gw, { name: `Workspace ${slug}`, slug });
  assert.is(res.status, 201, res.text);
  return { id: at(res.body, "data", "id") as string, slug };
}

const putBudget = (gw: TestGateway, ref: string, interval: string, body: Record<string, unknown>, key = gw.key) =>
  call(gw.url, "PUT", `/api/v1/workspaces/${encodeURIComponent(ref)}/budgets/${interval}`, { key, body });

const deleteBudget = (gw: TestGateway, ref: string, interval: string, key = gw.key) =>
  call(gw.url, "DELETE", `/api/v1/workspaces/${encodeURIComponent(ref)}/budgets/${interval}`, { key });

async function plainKey(gw: TestGateway, workspaceId?: string): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "plain", ...(workspaceId ? { workspace_id: workspaceId } : {}) },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "key") as string;
}

async function budgetsOf(gw: TestGateway, key: string): Promise<Array<Record<string, unknown>>> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(res.status, 200, res.text);
  return at(res.body, "data", "budgets") as Array<Record<string, unknown>>;
}

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

// ---------------------------------------------------------------------------------------------
// POST /workspaces
// ---------------------------------------------------------------------------------------------

test("POST /workspaces with only name and slug: 201 with every field of 2.5 and its defaults", async ({ gw }) => {
  const before = Date.now();
  const res = await createWorkspace(gw, { name: "Minimal", slug: "minimal" });
  assert.is(res.status, 201, res.text);
  const data = at(res.body, "data") as Record<string, unknown>;
  for (const field of WORKSPACE_FIELDS) assert.ok(field in data, `missing ${field}`);
  assert.match(String(data.id), UUID);
  assert.is(data.name, "Minimal");
  assert.is(data.slug, "minimal");
  assert.is(data.description, null);
  assert.match(String(data.created_at), ISO);
  assert.ok(Math.abs(Date.parse(String(data.created_at)) - before) < 60_000, "created_at is the creation time");
  assert.is(data.updated_at, null, "updated_at is null before any update");
  assert.type(data.created_by, "string");
  assert.ok(String(data.created_by).length > 0);
  assert.match(String(data.default_guardrail_id), UUID, "a default guardrail that restricts nothing");
  assert.is(data.default_image_model, null);
  assert.is(data.default_text_model, null);
  assert.is(data.default_provider_sort, null);
  assert.is(data.disabled_server_tools, null);
  assert.is(data.include_byok_in_budgets, false);
  assert.is(data.io_logging_api_key_ids, null);
  assert.is(data.io_logging_sampling_rate, 1);
  assert.is(data.is_data_discount_logging_enabled, false);
  assert.is(data.is_observability_broadcast_enabled, false);
  assert.is(data.is_observability_io_logging_enabled, false);
});

test("POST /workspaces with every field: the given values come back", async ({ gw }) => {
  const body = {
    name: "Full workspace",
    slug: "full-workspace-1",
    description: "All the fields",
    default_image_model: "acme/image-1",
    default_text_model: "acme/text-1",
    default_provider_sort: "throughput",
    disabled_server_tools: ["svc:bash", "svc:web_search"],
    io_logging_api_key_ids: ["abc123", "def456"],
    io_logging_sampling_rate: 0.25,
    is_data_discount_logging_enabled: true,
    is_observability_broadcast_enabled: true,
    is_observability_io_logging_enabled: true,
  };
  const res = await createWorkspace(gw, body);
  assert.is(res.status, 201, res.text);
  const data = at(res.body, "data") as Record<string, unknown>;
  assert.is(data.name, body.name);
  assert.is(data.slug, body.slug);
  assert.is(data.description, body.description);
  assert.is(data.default_image_model, body.default_image_model);
  assert.is(data.default_text_model, body.default_text_model);
  assert.is(data.default_provider_sort, "throughput");
  assert.equal([...(data.disabled_server_tools as string[])].sort(), ["svc:bash", "svc:web_search"]);
  assert.equal(data.io_logging_api_key_ids, ["abc123", "def456"]);
  assert.is(data.io_logging_sampling_rate, 0.25);
  assert.is(data.is_data_discount_logging_enabled, true);
  assert.is(data.is_observability_broadcast_enabled, true);
  assert.is(data.is_observability_io_logging_enabled, true);
  assert.is(data.updated_at, null);
});

test("POST /workspaces accepts every provider sort and every server tool of the API", async ({ gw }) => {
  for (const sort of ["price", "throughput", "latency", "exacto"]) {
    const res = await createWorkspace(gw, {
      name: "sorted",
      slug: uniqueSlug(`sort-${sort}`),
      default_provider_sort: sort,
    });
    assert.is(res.status, 201, `${sort}: ${res.text}`);
    assert.is(at(res.body, "data", "default_provider_sort"), sort);
  }
  const res = await createWorkspace(gw, {
    name: "all tools",
    slug: uniqueSlug("all-tools"),
    disabled_server_tools: SERVER_TOOLS,
  });
  assert.is(res.status, 201, res.text);
  assert.equal([...(at(res.body, "data", "disabled_server_tools") as string[])].sort(), [...SERVER_TOOLS].sort());
});

test("disabled_server_tools: [] and null both clear the list (null in the response)", async ({ gw }) => {
  for (const value of [[], null]) {
    const res = await createWorkspace(gw, {
      name: "no tools",
      slug: uniqueSlug("no-tools"),
      disabled_server_tools: value,
    });
    assert.is(res.status, 201, `${JSON.stringify(value)}: ${res.text}`);
    assert.is(at(res.body, "data", "disabled_server_tools"), null, JSON.stringify(value));
  }
});

test("POST /workspaces accepts the boundary values of the 4.4 rules", async ({ gw }) => {
  const cases: Array<Record<string, unknown>> = [
    { name: "n", slug: "a" },
    { name: "n".repeat(100), slug: "b".repeat(50) },
    { name: "n", slug: "a1-b2-c3" },
    { name: "n", slug: "0", description: "d".repeat(500) },
    { name: "n", slug: "rate-min", io_logging_sampling_rate: 0.0001 },
    { name: "n", slug: "rate-max", io_logging_sampling_rate: 1 },
  ];
  for (const body of cases) {
    const res = await createWorkspace(gw, body);
    assert.is(res.status, 201, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`);
    assert.is(at(res.body, "data", "slug"), body.slug);
    assert.is(at(res.body, "data", "name"), body.name);
    if ("description" in body) assert.is(at(res.body, "data", "description"), body.description);
    if ("io_logging_sampling_rate" in body)
      assert.is(at(res.body, "data", "io_logging_sampling_rate"), body.io_logging_sampling_rate);
  }
});

test("POST /workspaces: each rule of the 4.4 field table gives 400 naming the field", async ({ gw }) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ slug: "no-name" }, /name/],
    [{ name: "", slug: "empty-name" }, /name/],
    [{ name: "x".repeat(101), slug: "long-name" }, /name/],
    [{ name: "x" }, /slug/],
    [{ name: "x", slug: "" }, /slug/],
    [{ name: "x", slug: "Bad" }, /slug/],
    [{ name: "x", slug: "a--b" }, /slug/],
    [{ name: "x", slug: "-a" }, /slug/],
    [{ name: "x", slug: "a-" }, /slug/],
    [{ name: "x", slug: "a_b" }, /slug/],
    [{ name: "x", slug: "a b" }, /slug/],
    [{ name: "x", slug: "a".repeat(51) }, /slug/],
    [{ name: "x", slug: "long-desc", description: "d".repeat(501) }, /description/],
    [{ name: "x", slug: "bad-sort", default_provider_sort: "cheapest" }, /default_provider_sort/],
    [{ name: "x", slug: "bad-sort-case", default_provider_sort: "Price" }, /default_provider_sort/],
    [{ name: "x", slug: "bad-tool", disabled_server_tools: ["svc:teleport"] }, /disabled_server_tools/],
    [{ name: "x", slug: "bad-tool-2", disabled_server_tools: ["svc:bash", "web_search"] }, /disabled_server_tools/],
    [{ name: "x", slug: "rate-zero", io_logging_sampling_rate: 0 }, /io_logging_sampling_rate/],
    [{ name: "x", slug: "rate-high", io_logging_sampling_rate: 1.5 }, /io_logging_sampling_rate/],
    [{ name: "x", slug: "rate-negative", io_logging_sampling_rate: -0.5 }, /io_logging_sampling_rate/],
  ];
  for (const [body, message] of cases) {
    assertError(await createWorkspace(gw, body), 400, message, JSON.stringify(body).slice(0, 80));
  }
});

test("POST /workspaces: wrong JSON types give 400 naming the field", async ({ gw }) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: 42, slug: "t-name" }, /name/],
    [{ name: "x", slug: true }, /slug/],
    [{ name: "x", slug: "t-desc", description: 5 }, /description/],
    [{ name: "x", slug: "t-image", default_image_model: ["a"] }, /default_image_model/],
    [{ name: "x", slug: "t-text", default_text_model: {} }, /default_text_model/],
    [{ name: "x", slug: "t-sort", default_provider_sort: 1 }, /default_provider_sort/],
    [{ name: "x", slug: "t-tools", disabled_server_tools: "svc:bash" }, /disabled_server_tools/],
    [{ name: "x", slug: "t-ids", io_logging_api_key_ids: "abc" }, /io_logging_api_key_ids/],
    [{ name: "x", slug: "t-ids-item", io_logging_api_key_ids: [1] }, /io_logging_api_key_ids/],
    [{ name: "x", slug: "t-rate", io_logging_sampling_rate: "0.5" }, /io_logging_sampling_rate/],
    [{ name: "x", slug: "t-discount", is_data_discount_logging_enabled: "yes" }, /is_data_discount_logging_enabled/],
    [{ name: "x", slug: "t-broadcast", is_observability_broadcast_enabled: 1 }, /is_observability_broadcast_enabled/],
    [{ name: "x", slug: "t-io", is_observability_io_logging_enabled: "true" }, /is_observability_io_logging_enabled/],
  ];
  for (const [body, message] of cases) {
    assertError(await createWorkspace(gw, body), 400, message, JSON.stringify(body));
  }
});

test("POST /workspaces: malformed JSON and a non-object body give 400", async ({ gw }) => {
  for (const raw of ['{"name": "x", "slug":', "not json", "[]", '"a string"']) {
    const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, raw });
    assertError(res, 400, undefined, raw);
  }
});

test("slugs are unique per organization (409) but may repeat across organizations", async ({ gw }) => {
  const first = await createWorkspace(gw, { name: "one", slug: "shared-slug" });
  assert.is(first.status, 201, first.text);
  assertError(await createWorkspace(gw, { name: "two", slug: "shared-slug" }), 409);
  // The bootstrap organization already has its "default" workspace.
  assertError(await createWorkspace(gw, { name: "default again", slug: "default" }), 409);

  const other = await seedOrganization("workspaces-other-org");
  const theirs = await createWorkspace(gw, { name: "theirs", slug: "shared-slug" }, other.key);
  assert.is(theirs.status, 201, theirs.text);
  assert.is.not(at(theirs.body, "data", "id"), at(first.body, "data", "id"));
});

test("POST /workspaces: non-management key 403, no key 401", async ({ gw }) => {
  const secret = await plainKey(gw);
  const forbidden = await createWorkspace(gw, { name: "x", slug: "forbidden-ws" }, secret);
  assertError(forbidden, 403, /management keys/);
  const anonymous = await call(gw.url, "POST", "/api/v1/workspaces", { body: { name: "x", slug: "anonymous-ws" } });
  assertError(anonymous, 401);
  // Neither attempt created anything: the slugs are still free.
  assert.is((await createWorkspace(gw, { name: "x", slug: "forbidden-ws" })).status, 201);
  assert.is((await createWorkspace(gw, { name: "x", slug: "anonymous-ws" })).status, 201);
});

// ---------------------------------------------------------------------------------------------
// Budgets
// ---------------------------------------------------------------------------------------------

test("PUT budget by UUID and by slug creates the budget; replacing an interval updates it", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-put");
  const byId = await putBudget(gw, ws.id, "monthly", { limit_usd: 20 });
  assert.is(byId.status, 200, byId.text);
  assert.match(String(at(byId.body, "data", "id")), UUID);
  assert.is(at(byId.body, "data", "workspace_id"), ws.id);
  assert.is(at(byId.body, "data", "limit_usd"), 20);
  assert.is(at(byId.body, "data", "reset_interval"), "monthly");

  const bySlug = await putBudget(gw, ws.slug, "daily", { limit_usd: 2.5 });
  assert.is(bySlug.status, 200, bySlug.text);
  assert.is(at(bySlug.body, "data", "workspace_id"), ws.id, "the slug addresses the same workspace");
  assert.is(at(bySlug.body, "data", "limit_usd"), 2.5);
  assert.is(at(bySlug.body, "data", "reset_interval"), "daily");

  const replaced = await putBudget(gw, ws.slug, "monthly", { limit_usd: 30 });
  assert.is(replaced.status, 200, replaced.text);
  assert.is(at(replaced.body, "data", "id"), at(byId.body, "data", "id"), "replacing keeps the budget");
  assert.is(at(replaced.body, "data", "limit_usd"), 30);

  const key = await plainKey(gw, ws.id);
  const budgets = await budgetsOf(gw, key);
  const monthly = budgets.filter((b) => b.reset_interval === "monthly");
  assert.is(monthly.length, 1, "one budget per interval");
  assert.is(monthly[0]!.limit_usd, 30);
  assert.is(budgets.filter((b) => b.reset_interval === "daily")[0]?.limit_usd, 2.5);
});

test("PUT budget: limit_usd must be a number greater than 0", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-limit");
  for (const body of [{}, { limit_usd: 0 }, { limit_usd: -1 }, { limit_usd: "5" }, { limit_usd: null }]) {
    assertError(await putBudget(gw, ws.id, "weekly", body), 400, /limit_usd/, JSON.stringify(body));
  }
  const key = await plainKey(gw, ws.id);
  assert.equal(await budgetsOf(gw, key), [], "nothing was stored");
});

test("PUT budget: limits must decrease lifetime > monthly > weekly > daily", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-order");
  assert.is((await putBudget(gw, ws.id, "weekly", { limit_usd: 10 })).status, 200);

  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 10 }), 400, undefined, "daily equal to weekly");
  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 11 }), 400, undefined, "daily above weekly");
  assertError(await putBudget(gw, ws.id, "monthly", { limit_usd: 10 }), 400, undefined, "monthly equal to weekly");
  assertError(await putBudget(gw, ws.id, "monthly", { limit_usd: 9 }), 400, undefined, "monthly below weekly");
  assertError(await putBudget(gw, ws.id, "lifetime", { limit_usd: 5 }), 400, undefined, "lifetime below weekly");

  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 5 })).status, 200);
  assert.is((await putBudget(gw, ws.id, "monthly", { limit_usd: 40 })).status, 200);
  assert.is((await putBudget(gw, ws.id, "lifetime", { limit_usd: 100 })).status, 200);

  // Non-adjacent intervals are ordered too, and a replacement must respect the others.
  assertError(await putBudget(gw, ws.id, "lifetime", { limit_usd: 40 }), 400, undefined, "lifetime equal to monthly");
  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 150 }), 400, undefined, "daily above lifetime");
  assertError(await putBudget(gw, ws.id, "weekly", { limit_usd: 4 }), 400, undefined, "weekly replaced below daily");
  assertError(await putBudget(gw, ws.id, "weekly", { limit_usd: 41 }), 400, undefined, "weekly replaced above monthly");
  assert.is((await putBudget(gw, ws.id, "weekly", { limit_usd: 39 })).status, 200);

  const key = await plainKey(gw, ws.id);
  const limits = Object.fromEntries((await budgetsOf(gw, key)).map((b) => [b.reset_interval as string, b.limit_usd]));
  assert.equal(limits, { daily: 5, weekly: 39, monthly: 40, lifetime: 100 }, "rejected writes changed nothing");

  // Removing a budget lifts its constraint.
  assert.is((await deleteBudget(gw, ws.id, "weekly")).status, 200);
  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 20 })).status, 200);
});

test("PUT budget: include_byok_in_budgets changes the workspace's flag; omitted leaves it", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-byok");
  const key = await plainKey(gw, ws.id);
  assert.is((await putBudget(gw, ws.id, "monthly", { limit_usd: 10 })).status, 200);
  assert.is((await budgetsOf(gw, key))[0]?.include_byok, false);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, false);

  assert.is((await putBudget(gw, ws.slug, "weekly", { limit_usd: 5, include_byok_in_budgets: true })).status, 200);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, true);
  const budgets = await budgetsOf(gw, key);
  assert.is(budgets.length, 2);
  for (const b of budgets) assert.is(b.include_byok, true, `${String(b.reset_interval)} follows the workspace flag`);

  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1 })).status, 200);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, true, "omitted: unchanged");

  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1, include_byok_in_budgets: false })).status, 200);
  assert.is((await WorkspaceRow.findByPk(ws.id))?.includeByokInBudgets, false);
  for (const b of await budgetsOf(gw, key)) assert.is(b.include_byok, false);

  assertError(
    await putBudget(gw, ws.id, "daily", { limit_usd: 1, include_byok_in_budgets: "yes" }),
    400,
    /include_byok_in_budgets/,
  );
});

test("DELETE budget by UUID and by slug answers {deleted: true}, also when there was none", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-delete");
  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1 })).status, 200);
  assert.is((await putBudget(gw, ws.id, "lifetime", { limit_usd: 50 })).status, 200);
  const key = await plainKey(gw, ws.id);

  const byId = await deleteBudget(gw, ws.id, "daily");
  assert.is(byId.status, 200, byId.text);
  assert.equal(byId.body, { deleted: true });
  assert.equal(
    (await budgetsOf(gw, key)).map((b) => b.reset_interval),
    ["lifetime"],
  );

  const bySlug = await deleteBudget(gw, ws.slug, "lifetime");
  assert.is(bySlug.status, 200, bySlug.text);
  assert.equal(bySlug.body, { deleted: true });
  assert.equal(await budgetsOf(gw, key), []);

  for (const [ref, interval] of [
    [ws.id, "daily"],
    [ws.slug, "weekly"],
    [ws.slug, "monthly"],
    [ws.id, "lifetime"],
  ] as const) {
    const again = await deleteBudget(gw, ref, interval);
    assert.is(again.status, 200, `${ref} ${interval}: ${again.text}`);
    assert.equal(again.body, { deleted: true });
  }
});

test("budgets: an unknown interval is 400, an unknown workspace 404", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-bad");
  for (const interval of ["yearly", "Daily", "hourly"]) {
    assertError(await putBudget(gw, ws.id, interval, { limit_usd: 1 }), 400, /interval/, `PUT ${interval}`);
    assertError(await deleteBudget(gw, ws.id, interval), 400, /interval/, `DELETE ${interval}`);
  }
  for (const ref of ["00000000-0000-4000-8000-000000000000", "no-such-workspace"]) {
    assertError(await putBudget(gw, ref, "daily", { limit_usd: 1 }), 404, undefined, `PUT ${ref}`);
    assertError(await deleteBudget(gw, ref, "daily"), 404, undefined, `DELETE ${ref}`);
  }
});

test("budgets of another organization's workspace are out of reach (404) and stay untouched", async ({ gw }) => {
  const other = await seedOrganization("budget-other-org");
  const theirs = await putBudget(gw, other.workspaceId, "monthly", { limit_usd: 7 }, other.key);
  assert.is(theirs.status, 200, theirs.text);

  assertError(await putBudget(gw, other.workspaceId, "monthly", { limit_usd: 1000 }), 404, undefined, "PUT");
  assertError(await putBudget(gw, other.workspaceId, "daily", { limit_usd: 1 }), 404, undefined, "PUT new interval");
  assertError(await deleteBudget(gw, other.workspaceId, "monthly"), 404, undefined, "DELETE");
  assertError(await deleteBudget(gw, other.workspaceId, "weekly"), 404, undefined, "DELETE of an absent interval");

  const budgets = await budgetsOf(gw, other.key);
  assert.is(budgets.length, 1);
  assert.is(budgets[0]!.reset_interval, "monthly");
  assert.is(budgets[0]!.limit_usd, 7);
});

test("budgets: non-management key 403, no key 401", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budget-auth");
  assert.is((await putBudget(gw, ws.id, "monthly", { limit_usd: 10 })).status, 200);
  const secret = await plainKey(gw, ws.id);
  assertError(await putBudget(gw, ws.id, "daily", { limit_usd: 1 }, secret), 403, /management keys/);
  assertError(await deleteBudget(gw, ws.slug, "monthly", secret), 403, /management keys/);
  assertError(await call(gw.url, "PUT", `/api/v1/workspaces/${ws.id}/budgets/daily`, { body: { limit_usd: 1 } }), 401);
  assertError(await call(gw.url, "DELETE", `/api/v1/workspaces/${ws.id}/budgets/monthly`), 401);
  const budgets = await budgetsOf(gw, secret);
  assert.equal(
    budgets.map((b) => [b.reset_interval, b.limit_usd]),
    [["monthly", 10]],
    "nothing changed",
  );
});

// ---------------------------------------------------------------------------------------------
// GET /key with workspace budgets
// ---------------------------------------------------------------------------------------------

/** The next reset boundaries (UTC) seen from `now`, computed independently of the server. */
function boundaries(now: Date): Record<string, string | null> {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const dow = now.getUTCDay(); // 0 = Sunday, 1 = Monday
  const daysToMonday = (8 - dow) % 7 || 7;
  return {
    daily: new Date(Date.UTC(y, m, d + 1)).toISOString(),
    weekly: new Date(Date.UTC(y, m, d + daysToMonday)).toISOString(),
    monthly: new Date(Date.UTC(y, m + 1, 1)).toISOString(),
    lifetime: null,
  };
}

test("GET /key lists the workspace budgets with their next UTC boundaries; effective_budget has the least remaining", async ({
  gw,
}) => {
  const ws = await newWorkspace(gw, "key-budgets");
  const ids: Record<string, string> = {};
  const limits: Record<string, number> = { lifetime: 100, monthly: 40, weekly: 15, daily: 4.5 };
  for (const interval of ["lifetime", "monthly", "weekly", "daily"]) {
    const res = await putBudget(gw, ws.id, interval, { limit_usd: limits[interval] });
    assert.is(res.status, 200, res.text);
    ids[interval] = at(res.body, "data", "id") as string;
  }
  const key = await plainKey(gw, ws.id);

  const before = boundaries(new Date());
  const res = await call(gw.url, "GET", "/api/v1/key", { key });
  const after = boundaries(new Date());
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "workspace_id"), ws.id);
  const budgets = at(res.body, "data", "budgets") as Array<Record<string, unknown>>;
  assert.is(budgets.length, 4);
  for (const interval of ["lifetime", "monthly", "weekly", "daily"]) {
    const b = budgets.find((x) => x.reset_interval === interval);
    assert.ok(b, `missing the ${interval} budget`);
    assert.is(b.scope, "workspace", interval);
    assert.is(b.budget_id, ids[interval], interval);
    assert.is(b.limit_usd, limits[interval], interval);
    assert.is(b.spend_usd, 0, interval);
    assert.is(b.remaining_usd, limits[interval], interval);
    assert.is(b.include_byok, false, interval);
    if (interval === "lifetime") {
      assert.is(b.resets_at, null, "a lifetime budget never resets");
    } else {
      assert.match(String(b.resets_at), ISO, interval);
      const resetsAt = new Date(String(b.resets_at)).toISOString();
      assert.ok(
        resetsAt === before[interval] || resetsAt === after[interval],
        `${interval}: ${resetsAt}, expected ${before[interval]}`,
      );
    }
  }
  const effective = at(res.body, "data", "effective_budget") as Record<string, unknown>;
  assert.is(effective.reset_interval, "daily");
  assert.is(effective.budget_id, ids.daily);
  assert.is(effective.scope, "workspace");
  assert.is(effective.remaining_usd, 4.5);
});

test("GET /key: effective_budget is the least remaining across the key's own limit and the workspace budgets", async ({
  gw,
}) => {
  const ws = await newWorkspace(gw, "key-effective");
  assert.is((await putBudget(gw, ws.id, "weekly", { limit_usd: 8 })).status, 200);
  const lifetime = await putBudget(gw, ws.slug, "lifetime", { limit_usd: 30 });
  assert.is(lifetime.status, 200);

  const loose = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "loose", workspace_id: ws.id, limit: 50 },
  });
  assert.is(loose.status, 201, loose.text);
  const looseInfo = await call(gw.url, "GET", "/api/v1/key", { key: at(loose.body, "key") as string });
  assert.is((at(looseInfo.body, "data", "budgets") as unknown[]).length, 3);
  assert.is(at(looseInfo.body, "data", "effective_budget", "scope"), "workspace");
  assert.is(at(looseInfo.body, "data", "effective_budget", "reset_interval"), "weekly");
  assert.is(at(looseInfo.body, "data", "effective_budget", "remaining_usd"), 8);

  const tight = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "tight", workspace_id: ws.id, limit: 3 },
  });
  assert.is(tight.status, 201, tight.text);
  const tightInfo = await call(gw.url, "GET", "/api/v1/key", { key: at(tight.body, "key") as string });
  assert.is(at(tightInfo.body, "data", "effective_budget", "scope"), "key");
  assert.is(at(tightInfo.body, "data", "effective_budget", "remaining_usd"), 3);

  // Without the weekly budget the lifetime one binds the loose key.
  assert.is((await deleteBudget(gw, ws.id, "weekly")).status, 200);
  const after = await call(gw.url, "GET", "/api/v1/key", { key: at(loose.body, "key") as string });
  assert.is(at(after.body, "data", "effective_budget", "reset_interval"), "lifetime");
  assert.is(at(after.body, "data", "effective_budget", "budget_id"), at(lifetime.body, "data", "id"));
  assert.is(at(after.body, "data", "effective_budget", "resets_at"), null);
});

test("GET /key: keys of other workspaces do not see a workspace's budgets", async ({ gw }) => {
  const ws = await newWorkspace(gw, "key-isolated");
  assert.is((await putBudget(gw, ws.id, "daily", { limit_usd: 1 })).status, 200);
  const elsewhere = await newWorkspace(gw, "key-elsewhere");
  const key = await plainKey(gw, elsewhere.id);
  assert.equal(await budgetsOf(gw, key), []);
  const info = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(at(info.body, "data", "effective_budget"), null);
});

test.run();
