import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { GuardrailRow } from "../../../server/platform/db/governance-models.js";
import { ApiKeyRow, WorkspaceBudgetRow, WorkspaceRow } from "../../../server/platform/db/models.js";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID, WORKSPACE_FIELDS } from "../../support/shapes.js";

const test = suite<{ gw: TestGateway; organizationId: string; defaultWorkspaceId: string }>(
  "workspaces: get, list, update, delete, budgets",
);
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  const own = await call(ctx.gw.url, "GET", "/api/v1/key", { key: ctx.gw.key });
  ctx.organizationId = at(own.body, "data", "organization_id") as string;
  ctx.defaultWorkspaceId = at(own.body, "data", "workspace_id") as string;
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const MISSING_UUID = "00000000-0000-4000-8000-000000000000";

let counter = 0;
const uniqueSlug = (prefix: string) => `${prefix}-${++counter}`;

type Json = Record<string, unknown>;

const path = (ref: string) => `/api/v1/workspaces/${encodeURIComponent(ref)}`;
const getWorkspace = (gw: TestGateway, ref: string, key = gw.key) => call(gw.url, "GET", path(ref), { key });
const patchWorkspace = (gw: TestGateway, ref: string, body: unknown, key = gw.key) =>
  call(gw.url, "PATCH", path(ref), { key, body });
const deleteWorkspace = (gw: TestGateway, ref: string, key = gw.key) => call(gw.url, "DELETE", path(ref), { key });
const listWorkspaces = (gw: TestGateway, query = "", key = gw.key) =>
  call(gw.url, "GET", `/api/v1/workspaces${query}`, { key });
const putBudget = (gw: TestGateway, ref: string, interval: string, limit_usd: number) =>
  call(gw.url, "PUT", `${path(ref)}/budgets/${interval}`, { key: gw.key, body: { limit_usd } });
const getBudget = (gw: TestGateway, ref: string, interval: string, key = gw.key) =>
  call(gw.url, "GET", `${path(ref)}/budgets/${interval}`, { key });
const listBudgets = (gw: TestGateway, ref: string, key = gw.key) =>
  call(gw.url, "GET", `${path(ref)}/budgets`, { key });

async function newWorkspace(gw: TestGateway, prefix: string, extra: Json = {}, key = gw.key): Promise<Json> {
  const slug = uniqueSlug(prefix);
  const res = await call(gw.url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: `Workspace ${slug}`, slug, ...extra },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Json;
}

async function plainKey(gw: TestGateway, workspaceId?: string): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "plain", ...(workspaceId ? { workspace_id: workspaceId } : {}) },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "key") as string;
}

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

function assertAllFields(data: Json): void {
  for (const field of WORKSPACE_FIELDS) assert.ok(field in data, `missing ${field}`);
}

// ---------------------------------------------------------------------------------------------
// GET /workspaces/{ref}
// ---------------------------------------------------------------------------------------------

test("GET by UUID and by slug returns every field of 2.5, as created", async ({ gw }) => {
  const created = await newWorkspace(gw, "get-me", {
    description: "d",
    default_text_model: "acme/text",
    default_provider_sort: "latency",
    disabled_server_tools: ["svc:shell"],
    io_logging_api_key_ids: ["k1"],
    io_logging_sampling_rate: 0.5,
    include_byok_in_budgets: true,
  });
  for (const ref of [created.id as string, created.slug as string, (created.id as string).toUpperCase()]) {
    const res = await getWorkspace(gw, ref);
    assert.is(res.status, 200, `${ref}: ${res.text}`);
    const data = at(res.body, "data") as Json;
    assertAllFields(data);
    assert.equal(data, created, ref);
  }
});

test("GET: unknown UUID or slug 404; another organization's workspace 404 by UUID and by slug", async ({ gw }) => {
  assertError(await getWorkspace(gw, MISSING_UUID), 404);
  assertError(await getWorkspace(gw, "no-such-workspace"), 404);
  const other = await seedOrganization("get-other-org");
  const theirs = await newWorkspace(gw, "their-secret", {}, other.key);
  assertError(await getWorkspace(gw, theirs.id as string), 404, undefined, "by UUID");
  assertError(await getWorkspace(gw, theirs.slug as string), 404, undefined, "by slug");
  assertError(await getWorkspace(gw, other.workspaceId), 404, undefined, "their default");
  assert.is((await getWorkspace(gw, theirs.slug as string, other.key)).status, 200, "still theirs");
});

test("workspace routes: 401 without a key, 403 for a non-management key", async ({ gw }) => {
  const ws = await newWorkspace(gw, "auth");
  const secret = await plainKey(gw);
  const routes: Array<[string, string, unknown]> = [
    ["GET", "/api/v1/workspaces", undefined],
    ["GET", path(ws.id as string), undefined],
    ["PATCH", path(ws.id as string), { name: "stolen" }],
    ["DELETE", path(ws.id as string), undefined],
    ["GET", `${path(ws.id as string)}/budgets`, undefined],
    ["GET", `${path(ws.id as string)}/budgets/daily`, undefined],
  ];
  for (const [method, route, body] of routes) {
    assertError(await call(gw.url, method, route, { body }), 401, undefined, `${method} ${route}`);
    assertError(await call(gw.url, method, route, { key: secret, body }), 403, /management keys/, `${method} ${route}`);
  }
  assert.is(at((await getWorkspace(gw, ws.id as string)).body, "data", "name"), ws.name, "nothing changed");
});

// ---------------------------------------------------------------------------------------------
// GET /workspaces
// ---------------------------------------------------------------------------------------------

test("GET /workspaces: {data, total_count}, oldest first, offset and limit", async ({ gw, defaultWorkspaceId }) => {
  const created = [await newWorkspace(gw, "list"), await newWorkspace(gw, "list"), await newWorkspace(gw, "list")];
  const all = await listWorkspaces(gw);
  assert.is(all.status, 200, all.text);
  const data = at(all.body, "data") as Json[];
  const total = at(all.body, "total_count") as number;
  assert.is(data.length, total);
  assert.is(
    total,
    await WorkspaceRow.count({
      where: { organizationId: (await WorkspaceRow.findByPk(defaultWorkspaceId))!.organizationId },
    }),
  );
  assert.is(data[0]!.id, defaultWorkspaceId, "the default workspace is the oldest");
  for (const ws of data) assertAllFields(ws);
  const times = data.map((ws) => Date.parse(String(ws.created_at)));
  assert.equal(
    times,
    [...times].sort((a, b) => a - b),
    "oldest first",
  );
  const ids = data.map((ws) => ws.id);
  const positions = created.map((ws) => ids.indexOf(ws.id));
  assert.ok(
    positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!)),
    "creation order",
  );

  const page = await listWorkspaces(gw, "?offset=1&limit=2");
  assert.is(page.status, 200, page.text);
  assert.equal(
    (at(page.body, "data") as Json[]).map((ws) => ws.id),
    ids.slice(1, 3),
  );
  assert.is(at(page.body, "total_count"), total, "total_count counts every workspace, not the page");
  const beyond = await listWorkspaces(gw, `?offset=${total}`);
  assert.equal(at(beyond.body, "data"), []);
  assert.is(at(beyond.body, "total_count"), total);

  for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?limit=abc"]) {
    assertError(await listWorkspaces(gw, query), 400, undefined, query);
  }
});

test("GET /workspaces lists only the caller's organization", async ({ gw }) => {
  const other = await seedOrganization("list-other-org");
  const theirs = await newWorkspace(gw, "list-theirs", {}, other.key);
  const mine = await listWorkspaces(gw);
  assert.not.ok((at(mine.body, "data") as Json[]).some((ws) => ws.id === theirs.id || ws.id === other.workspaceId));
  const their = await listWorkspaces(gw, "", other.key);
  assert.is(at(their.body, "total_count"), 2);
});

// ---------------------------------------------------------------------------------------------
// PATCH /workspaces/{ref}
// ---------------------------------------------------------------------------------------------

test("PATCH every field of 2.5; updated_at goes from null to the update time; omitted fields keep their value", async ({
  gw,
  organizationId,
  defaultWorkspaceId,
}) => {
  const ws = await newWorkspace(gw, "patch-all");
  assert.is(ws.updated_at, null);
  const guardrail = await GuardrailRow.create({
    organizationId,
    workspaceId: defaultWorkspaceId,
    name: "patch guardrail",
  });
  const slug = uniqueSlug("patched");
  const body = {
    name: "Patched",
    slug,
    description: "now described",
    default_image_model: "acme/image-2",
    default_text_model: "acme/text-2",
    default_provider_sort: "exacto",
    disabled_server_tools: ["svc:web_fetch", "svc:datetime"],
    include_byok_in_budgets: true,
    io_logging_api_key_ids: ["key-a"],
    io_logging_sampling_rate: 0.0001,
    is_data_discount_logging_enabled: true,
    is_observability_broadcast_enabled: true,
    is_observability_io_logging_enabled: true,
    default_guardrail_id: guardrail.id,
  };
  const before = Date.now();
  const res = await patchWorkspace(gw, ws.id as string, body);
  assert.is(res.status, 200, res.text);
  const data = at(res.body, "data") as Json;
  assertAllFields(data);
  for (const [field, value] of Object.entries(body)) {
    if (field === "disabled_server_tools")
      assert.equal([...(data[field] as string[])].sort(), [...(value as string[])].sort());
    else assert.equal(data[field], value, field);
  }
  assert.is(data.id, ws.id);
  assert.is(data.created_at, ws.created_at);
  assert.is(data.created_by, ws.created_by);
  assert.match(String(data.updated_at), ISO);
  assert.ok(Math.abs(Date.parse(String(data.updated_at)) - before) < 60_000);

  assert.equal(at((await getWorkspace(gw, slug)).body, "data"), data, "the new slug addresses it");
  assertError(await getWorkspace(gw, ws.slug as string), 404, undefined, "the old slug is gone");

  const renamed = await patchWorkspace(gw, slug, { name: "Only the name" });
  assert.is(renamed.status, 200, renamed.text);
  const after = at(renamed.body, "data") as Json;
  assert.is(after.name, "Only the name");
  for (const field of WORKSPACE_FIELDS.filter((f) => f !== "name" && f !== "updated_at"))
    assert.equal(after[field], data[field], field);
});

test("PATCH with an empty body changes nothing, not even updated_at", async ({ gw }) => {
  const ws = await newWorkspace(gw, "patch-empty");
  const res = await patchWorkspace(gw, ws.slug as string, {});
  assert.is(res.status, 200, res.text);
  assert.equal(at(res.body, "data"), ws);
});

test("PATCH null: clears lists and optional fields, resets the sampling rate to 1 and flags to false", async ({
  gw,
  organizationId,
  defaultWorkspaceId,
}) => {
  const guardrail = await GuardrailRow.create({
    organizationId,
    workspaceId: defaultWorkspaceId,
    name: "cleared guardrail",
  });
  const full = {
    description: "x",
    default_image_model: "i",
    default_text_model: "t",
    default_provider_sort: "price",
    disabled_server_tools: ["svc:bash"],
    io_logging_api_key_ids: ["k"],
    io_logging_sampling_rate: 0.3,
    include_byok_in_budgets: true,
    is_data_discount_logging_enabled: true,
    is_observability_broadcast_enabled: true,
    is_observability_io_logging_enabled: true,
    default_guardrail_id: guardrail.id,
  };
  const ws = await newWorkspace(gw, "patch-null", full);
  assert.is(ws.default_guardrail_id, guardrail.id);
  // default_guardrail_id is not nullable: it is replaced, never cleared.
  const nullable = Object.keys(full).filter((k) => k !== "default_guardrail_id");
  const cleared = await patchWorkspace(gw, ws.id as string, Object.fromEntries(nullable.map((k) => [k, null])));
  assert.is(cleared.status, 200, cleared.text);
  const data = at(cleared.body, "data") as Json;
  assert.is(data.default_guardrail_id, guardrail.id);
  for (const field of [
    "description",
    "default_image_model",
    "default_text_model",
    "default_provider_sort",
    "disabled_server_tools",
    "io_logging_api_key_ids",
  ]) {
    assert.is(data[field], null, field);
  }
  assert.is(data.io_logging_sampling_rate, 1);
  for (const field of [
    "include_byok_in_budgets",
    "is_data_discount_logging_enabled",
    "is_observability_broadcast_enabled",
    "is_observability_io_logging_enabled",
  ]) {
    assert.is(data[field], false, field);
  }
  const stored = await WorkspaceRow.findByPk(ws.id as string);
  assert.is(stored?.disabledServerTools, null, "stored as null");
  assert.is(stored?.ioLoggingApiKeyIds, null, "stored as null");
});

test("PATCH []: empty lists clear disabled_server_tools and io_logging_api_key_ids", async ({ gw }) => {
  const ws = await newWorkspace(gw, "patch-empty-lists", {
    disabled_server_tools: ["svc:bash", "svc:fusion"],
    io_logging_api_key_ids: ["a", "b"],
  });
  const res = await patchWorkspace(gw, ws.slug as string, { disabled_server_tools: [], io_logging_api_key_ids: [] });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "disabled_server_tools"), null);
  assert.is(at(res.body, "data", "io_logging_api_key_ids"), null);
  const stored = await WorkspaceRow.findByPk(ws.id as string);
  assert.is(stored?.disabledServerTools, null);
  assert.is(stored?.ioLoggingApiKeyIds, null);
});

test("PATCH: each field rule gives 400 naming the field, and nothing changes", async ({ gw }) => {
  const ws = await newWorkspace(gw, "patch-bad");
  const cases: Array<[Json, RegExp]> = [
    [{ name: null }, /name cannot be null/],
    [{ slug: null }, /slug cannot be null/],
    [{ name: "" }, /name/],
    [{ name: "n".repeat(101) }, /name/],
    [{ name: 5 }, /name/],
    [{ slug: "" }, /slug/],
    [{ slug: "Bad-Slug" }, /slug/],
    [{ slug: "a--b" }, /slug/],
    [{ slug: "s".repeat(51) }, /slug/],
    [{ description: "d".repeat(501) }, /description/],
    [{ default_image_model: "m".repeat(257) }, /default_image_model/],
    [{ default_provider_sort: "fastest" }, /default_provider_sort/],
    [{ disabled_server_tools: ["svc:teleport"] }, /disabled_server_tools/],
    [{ disabled_server_tools: "svc:bash" }, /disabled_server_tools/],
    [{ io_logging_api_key_ids: [""] }, /io_logging_api_key_ids/],
    [{ io_logging_api_key_ids: [1] }, /io_logging_api_key_ids/],
    [{ io_logging_sampling_rate: 0 }, /io_logging_sampling_rate/],
    [{ io_logging_sampling_rate: 1.5 }, /io_logging_sampling_rate/],
    [{ io_logging_sampling_rate: 0.00009 }, /io_logging_sampling_rate/],
    [{ io_logging_sampling_rate: "0.5" }, /io_logging_sampling_rate/],
    [{ include_byok_in_budgets: "yes" }, /include_byok_in_budgets/],
    [{ is_observability_io_logging_enabled: 1 }, /is_observability_io_logging_enabled/],
    [{ default_guardrail_id: "not-a-uuid" }, /default_guardrail_id/],
    [{ default_guardrail_id: MISSING_UUID }, /default_guardrail_id/],
    [{ name: "fine", slug: "Not Fine" }, /slug/],
  ];
  for (const [body, message] of cases) {
    assertError(await patchWorkspace(gw, ws.id as string, body), 400, message, JSON.stringify(body).slice(0, 80));
  }
  assertError(await call(gw.url, "PATCH", path(ws.id as string), { key: gw.key, raw: "{not json" }), 400);
  assert.equal(at((await getWorkspace(gw, ws.id as string)).body, "data"), ws, "no partial update");
});

test("PATCH slug: 409 when another workspace of the organization has it; its own slug or another org's is fine", async ({
  gw,
}) => {
  const a = await newWorkspace(gw, "slug-a");
  const b = await newWorkspace(gw, "slug-b");
  assertError(await patchWorkspace(gw, b.id as string, { slug: a.slug }), 409, /slug/);
  assertError(await patchWorkspace(gw, b.id as string, { slug: "default" }), 409, /slug/);
  assert.is(at((await getWorkspace(gw, b.id as string)).body, "data", "slug"), b.slug);

  const same = await patchWorkspace(gw, a.id as string, { slug: a.slug, name: "same slug" });
  assert.is(same.status, 200, same.text);

  const other = await seedOrganization("slug-other-org");
  const theirs = await newWorkspace(gw, "slug-theirs", {}, other.key);
  const taken = await patchWorkspace(gw, b.id as string, { slug: theirs.slug });
  assert.is(taken.status, 200, taken.text);
});

test("PATCH: unknown workspace 404; another organization's 404 by UUID and by slug, untouched", async ({ gw }) => {
  assertError(await patchWorkspace(gw, MISSING_UUID, { name: "x" }), 404);
  assertError(await patchWorkspace(gw, "no-such-workspace", { name: "x" }), 404);
  const other = await seedOrganization("patch-other-org");
  const theirs = await newWorkspace(gw, "patch-theirs", {}, other.key);
  assertError(await patchWorkspace(gw, theirs.id as string, { name: "mine now" }), 404, undefined, "by UUID");
  assertError(await patchWorkspace(gw, theirs.slug as string, { name: "mine now" }), 404, undefined, "by slug");
  assert.equal(at((await getWorkspace(gw, theirs.id as string, other.key)).body, "data"), theirs);
});

// ---------------------------------------------------------------------------------------------
// default_guardrail_id (POST and PATCH)
// ---------------------------------------------------------------------------------------------

test("default_guardrail_id must be a guardrail of the caller's organization, on create and on update", async ({
  gw,
  organizationId,
  defaultWorkspaceId,
}) => {
  const mine = await GuardrailRow.create({ organizationId, workspaceId: defaultWorkspaceId, name: "mine" });
  const other = await seedOrganization("guardrail-other-org");
  const theirs = await GuardrailRow.create({
    organizationId: other.organizationId,
    workspaceId: other.workspaceId,
    name: "theirs",
  });

  const created = await newWorkspace(gw, "with-guardrail", { default_guardrail_id: mine.id.toUpperCase() });
  assert.is(created.default_guardrail_id, mine.id);

  for (const id of [theirs.id, MISSING_UUID]) {
    const res = await call(gw.url, "POST", "/api/v1/workspaces", {
      key: gw.key,
      body: { name: "x", slug: uniqueSlug("bad-guardrail"), default_guardrail_id: id },
    });
    assertError(res, 400, /default_guardrail_id/, `create ${id}`);
    assertError(
      await patchWorkspace(gw, created.id as string, { default_guardrail_id: id }),
      400,
      /default_guardrail_id/,
      `update ${id}`,
    );
  }
  assert.is(at((await getWorkspace(gw, created.id as string)).body, "data", "default_guardrail_id"), mine.id);

  assertError(
    await patchWorkspace(gw, created.id as string, { default_guardrail_id: null }),
    400,
    /default_guardrail_id cannot be null/,
  );
  assert.is(
    at((await getWorkspace(gw, created.id as string)).body, "data", "default_guardrail_id"),
    mine.id,
    "a refused PATCH changes nothing",
  );
  const set = await patchWorkspace(gw, created.id as string, { default_guardrail_id: mine.id });
  assert.is(at(set.body, "data", "default_guardrail_id"), mine.id);
});

// ---------------------------------------------------------------------------------------------
// DELETE /workspaces/{ref}
// ---------------------------------------------------------------------------------------------

test("DELETE by UUID and by slug: {deleted: true}; budgets and guardrails go with the workspace", async ({
  gw,
  organizationId,
}) => {
  const byId = await newWorkspace(gw, "delete-id");
  assert.is((await putBudget(gw, byId.id as string, "monthly", 10)).status, 200);
  const guardrail = await GuardrailRow.create({ organizationId, workspaceId: byId.id as string, name: "goes too" });
  const res = await deleteWorkspace(gw, byId.id as string);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { deleted: true });
  assertError(await getWorkspace(gw, byId.id as string), 404);
  assert.is(await WorkspaceBudgetRow.count({ where: { workspaceId: byId.id as string } }), 0);
  assert.is(await GuardrailRow.findByPk(guardrail.id), null);

  const bySlug = await newWorkspace(gw, "delete-slug");
  const again = await deleteWorkspace(gw, bySlug.slug as string);
  assert.is(again.status, 200, again.text);
  assert.equal(again.body, { deleted: true });
  assertError(await getWorkspace(gw, bySlug.slug as string), 404);
  assertError(await deleteWorkspace(gw, bySlug.slug as string), 404, undefined, "a second delete");
  // The slug is free again.
  assert.is(
    (await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body: { name: "reborn", slug: bySlug.slug } }))
      .status,
    201,
  );
});

test("DELETE refuses (409) a workspace that still has keys, and the default workspace", async ({
  gw,
  defaultWorkspaceId,
}) => {
  const ws = await newWorkspace(gw, "delete-keys");
  const secret = await plainKey(gw, ws.id as string);
  assertError(await deleteWorkspace(gw, ws.id as string), 409, /API key/);
  assert.is((await call(gw.url, "GET", "/api/v1/key", { key: secret })).status, 200, "the key still works");
  assert.is((await getWorkspace(gw, ws.id as string)).status, 200);

  await ApiKeyRow.destroy({ where: { workspaceId: ws.id as string } });
  assert.is((await deleteWorkspace(gw, ws.id as string)).status, 200, "deletable once its keys are gone");

  assertError(await deleteWorkspace(gw, defaultWorkspaceId), 409, /default workspace/);
  assertError(await deleteWorkspace(gw, "default"), 409, /default workspace/);
  assert.is((await getWorkspace(gw, defaultWorkspaceId)).status, 200);
});

test("DELETE: unknown 404; another organization's 404 by UUID and by slug, untouched", async ({ gw }) => {
  assertError(await deleteWorkspace(gw, MISSING_UUID), 404);
  assertError(await deleteWorkspace(gw, "no-such-workspace"), 404);
  const other = await seedOrganization("delete-other-org");
  const theirs = await newWorkspace(gw, "delete-theirs", {}, other.key);
  assertError(await deleteWorkspace(gw, theirs.id as string), 404, undefined, "by UUID");
  assertError(await deleteWorkspace(gw, theirs.slug as string), 404, undefined, "by slug");
  assert.is((await getWorkspace(gw, theirs.id as string, other.key)).status, 200);
});

// ---------------------------------------------------------------------------------------------
// Budgets: GET list and GET one
// ---------------------------------------------------------------------------------------------

test("budgets: list ordered daily, weekly, monthly, lifetime; get one by interval; 404 for an interval without budget", async ({
  gw,
}) => {
  const ws = await newWorkspace(gw, "budgets");
  const empty = await listBudgets(gw, ws.id as string);
  assert.is(empty.status, 200, empty.text);
  assert.equal(empty.body, { data: [] });
  assertError(await getBudget(gw, ws.id as string, "daily"), 404, /daily/);

  const limits: Record<string, number> = { lifetime: 100, daily: 2, monthly: 40, weekly: 10 };
  const ids: Record<string, string> = {};
  for (const [interval, limit] of Object.entries(limits)) {
    const res = await putBudget(gw, ws.slug as string, interval, limit);
    assert.is(res.status, 200, res.text);
    ids[interval] = at(res.body, "data", "id") as string;
  }

  const listed = await listBudgets(gw, ws.slug as string);
  assert.is(listed.status, 200, listed.text);
  const data = at(listed.body, "data") as Json[];
  assert.equal(
    data.map((b) => b.reset_interval),
    ["daily", "weekly", "monthly", "lifetime"],
  );
  for (const budget of data) {
    const interval = budget.reset_interval as string;
    assert.equal(Object.keys(budget).sort(), [
      "created_at",
      "id",
      "limit_usd",
      "reset_interval",
      "updated_at",
      "workspace_id",
    ]);
    assert.is(budget.id, ids[interval]);
    assert.match(String(budget.id), UUID);
    assert.is(budget.workspace_id, ws.id);
    assert.is(budget.limit_usd, limits[interval]);
    assert.match(String(budget.created_at), ISO);
    assert.is(budget.updated_at, null);

    for (const ref of [ws.id as string, ws.slug as string]) {
      const one = await getBudget(gw, ref, interval);
      assert.is(one.status, 200, one.text);
      assert.equal(at(one.body, "data"), budget, `${ref} ${interval}`);
    }
  }

  assert.is((await putBudget(gw, ws.id as string, "weekly", 12)).status, 200);
  const replaced = await getBudget(gw, ws.id as string, "weekly");
  assert.is(at(replaced.body, "data", "limit_usd"), 12);
  assert.match(String(at(replaced.body, "data", "updated_at")), ISO);

  assert.is((await call(gw.url, "DELETE", `${path(ws.id as string)}/budgets/monthly`, { key: gw.key })).status, 200);
  assertError(await getBudget(gw, ws.id as string, "monthly"), 404);
  assert.equal(
    (at((await listBudgets(gw, ws.id as string)).body, "data") as Json[]).map((b) => b.reset_interval),
    ["daily", "weekly", "lifetime"],
  );
});

test("budgets: bad interval 400; unknown or another organization's workspace 404", async ({ gw }) => {
  const ws = await newWorkspace(gw, "budgets-bad");
  for (const interval of ["yearly", "Daily"])
    assertError(await getBudget(gw, ws.id as string, interval), 400, /interval/, interval);
  const other = await seedOrganization("budgets-other-org");
  const theirs = await newWorkspace(gw, "budgets-theirs", {}, other.key);
  assert.is((await putBudget({ ...gw, key: other.key }, theirs.id as string, "daily", 5)).status, 200);
  for (const ref of [MISSING_UUID, "no-such-workspace", theirs.id as string, theirs.slug as string]) {
    assertError(await listBudgets(gw, ref), 404, undefined, `list ${ref}`);
    assertError(await getBudget(gw, ref, "daily"), 404, undefined, `get ${ref}`);
  }
});

test.run();
