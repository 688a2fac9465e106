import * as assert from "uvu/assert";
import { GuardrailRow } from "../../../server/platform/db/governance-models.js";
import { WorkspaceRow } from "../../../server/platform/db/models.js";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, WORKSPACE_FIELDS } from "../../support/shapes.js";
import { assertError, type Json, newWorkspace, uniqueSlug, workspacesSuite } from "./workspaces-fixture.js";
import { assertAllFields, getWorkspace, MISSING_UUID, patchWorkspace, path } from "./workspace-routes.js";

/** PATCH /workspaces/{ref}: every field, null and empty lists, the values refused, slugs, the default guardrail. */
const test = workspacesSuite("workspaces: update");

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

test(
  "PATCH slug: 409 when another workspace of the organization has it; " + "its own slug or another org's is fine",
  async ({ gw }) => {
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
  },
);

test("PATCH: unknown workspace 404; another organization's 404 by UUID and by slug, untouched", async ({ gw }) => {
  assertError(await patchWorkspace(gw, MISSING_UUID, { name: "x" }), 404);
  assertError(await patchWorkspace(gw, "no-such-workspace", { name: "x" }), 404);
  const other = await seedOrganization("patch-other-org");
  const theirs = await newWorkspace(gw, "patch-theirs", {}, other.key);
  assertError(await patchWorkspace(gw, theirs.id as string, { name: "mine now" }), 404, undefined, "by UUID");
  assertError(await patchWorkspace(gw, theirs.slug as string, { name: "mine now" }), 404, undefined, "by slug");
  assert.equal(at((await getWorkspace(gw, theirs.id as string, other.key)).body, "data"), theirs);
});

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

test.run();
