import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID, WORKSPACE_FIELDS } from "../../support/shapes.js";
import { assertError, createWorkspace, plainKey, uniqueSlug, workspacesSuite } from "./workspaces-fixture.js";

/** POST /workspaces: the fields and defaults of a new workspace, the values each field refuses, unique slugs. */
const test = workspacesSuite("workspaces: create");

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

test.run();
