import * as assert from "uvu/assert";
import {
  GuardrailKeyAssignmentRow,
  GuardrailMemberAssignmentRow,
} from "../../../server/platform/db/governance-models.js";
import { WorkspaceRow } from "../../../server/platform/db/models.js";
import { at, call } from "../../support/http.js";
import { ISO } from "../../support/shapes.js";
import {
  assertError,
  assignKeys,
  assignMembers,
  getGuardrail,
  guardrailsSuite,
  type Json,
  newGuardrail,
  newKey,
  newMember,
  newWorkspace,
  patchGuardrail,
} from "./guardrails-fixture.js";

/** PATCH and DELETE /guardrails/{id}: the fields a change sets and clears, budgets, what a delete takes along. */
const test = guardrailsSuite("guardrails: update and delete");

test("PATCH /guardrails/{id}: changes only the given fields; updated_at is null until the first update", async ({
  gw,
}) => {
  const created = await newGuardrail(gw, {
    name: "Before",
    description: "old",
    limit_usd: 10,
    reset_interval: "weekly",
    allowed_models: ["a/b"],
    enforce_zdr_google: true,
  });
  assert.is(created.updated_at, null);
  const before = Date.now();
  const res = await patchGuardrail(gw, created.id as string, {
    name: "After",
    include_byok_in_budgets: true,
    allowed_providers: ["openai"],
    allowed_data_regions: ["global"],
    enable_free_model_training: true,
    content_filter_builtins: [{ slug: "phone", action: "redact" }],
    content_filters: [{ pattern: "x", action: "block" }],
  });
  assert.is(res.status, 200, res.text);
  const data = at(res.body, "data") as Json;
  assert.match(String(data.updated_at), ISO);
  assert.ok(Date.parse(String(data.updated_at)) >= before - 60_000);
  assert.is(data.created_at, created.created_at);
  assert.is(data.name, "After");
  assert.is(data.include_byok_in_budgets, true);
  assert.equal(data.allowed_providers, ["openai"]);
  assert.equal(data.allowed_data_regions, ["global"]);
  assert.is(data.enable_free_model_training, true);
  assert.equal(data.content_filter_builtins, [{ slug: "phone", label: "[PHONE]", action: "redact" }]);
  assert.equal(data.content_filters, [{ pattern: "x", action: "block" }]);
  // Untouched fields keep their values.
  assert.is(data.description, "old");
  assert.is(data.limit_usd, 10);
  assert.is(data.reset_interval, "weekly");
  assert.equal(data.allowed_models, ["a/b"]);
  assert.is(data.enforce_zdr_google, true);
  assert.equal(at((await getGuardrail(gw, created.id as string)).body, "data"), data, "GET shows the update");
});

test("PATCH /guardrails/{id}: null clears nullable fields, null or [] clears lists", async ({ gw }) => {
  const created = await newGuardrail(gw, {
    description: "x",
    allowed_models: ["a/b"],
    ignored_models: ["c/d"],
    allowed_providers: ["p"],
    ignored_providers: ["q"],
    allowed_data_regions: ["us"],
    enforce_zdr: true,
    enforce_zdr_xai: false,
    content_filter_builtins: [{ slug: "email", action: "redact" }],
    content_filters: [{ pattern: "a", action: "redact" }],
  });
  const res = await patchGuardrail(gw, created.id as string, {
    description: null,
    allowed_models: null,
    ignored_models: [],
    allowed_providers: null,
    ignored_providers: [],
    allowed_data_regions: null,
    enforce_zdr: null,
    enforce_zdr_xai: null,
    content_filter_builtins: [],
    content_filters: null,
  });
  assert.is(res.status, 200, res.text);
  const data = at(res.body, "data") as Json;
  for (const field of [
    "description",
    "allowed_models",
    "ignored_models",
    "allowed_providers",
    "ignored_providers",
    "allowed_data_regions",
    "enforce_zdr",
    "enforce_zdr_xai",
    "content_filters",
  ]) {
    assert.is(data[field], null, field);
  }
  assert.equal(data.content_filter_builtins, []);
  const again = await patchGuardrail(gw, created.id as string, { content_filters: [] });
  assert.is(at(again.body, "data", "content_filters"), null);
});

test("PATCH /guardrails/{id}: budget rules", async ({ gw }) => {
  const id = (await newGuardrail(gw, { limit_usd: 10, reset_interval: "monthly" })).id as string;
  // Dropping the interval leaves a one-time budget.
  let res = await patchGuardrail(gw, id, { reset_interval: null });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "limit_usd"), 10);
  assert.is(at(res.body, "data", "reset_interval"), null);
  res = await patchGuardrail(gw, id, { reset_interval: "daily" });
  assert.is(at(res.body, "data", "reset_interval"), "daily");
  res = await patchGuardrail(gw, id, { limit_usd: 2.25 });
  assert.is(at(res.body, "data", "limit_usd"), 2.25);
  assert.is(at(res.body, "data", "reset_interval"), "daily", "changing the limit keeps the interval");
  // Clearing the limit clears the interval too.
  res = await patchGuardrail(gw, id, { limit_usd: null });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "limit_usd"), null);
  assert.is(at(res.body, "data", "reset_interval"), null);
  // An interval needs a limit, stored or given.
  assertError(await patchGuardrail(gw, id, { reset_interval: "weekly" }), 400, /reset_interval/);
  res = await patchGuardrail(gw, id, { limit_usd: 3, reset_interval: "weekly" });
  assert.is(res.status, 200, res.text);
  assertError(await patchGuardrail(gw, id, { limit_usd: null, reset_interval: "monthly" }), 400, /reset_interval/);
  const after = await getGuardrail(gw, id);
  assert.is(at(after.body, "data", "limit_usd"), 3, "a refused update changes nothing");
  assert.is(at(after.body, "data", "reset_interval"), "weekly");
});

test("PATCH /guardrails/{id}: bad input gives 400 naming the field", async ({ gw }) => {
  const id = (await newGuardrail(gw, { name: "keep" })).id as string;
  const cases: Array<[Json, RegExp]> = [
    [{ name: null }, /name/],
    [{ name: "" }, /name/],
    [{ name: "x".repeat(201) }, /name/],
    [{ description: "d".repeat(1001) }, /description/],
    [{ limit_usd: -1 }, /limit_usd/],
    [{ reset_interval: "hourly" }, /reset_interval/],
    [{ allowed_models: [""] }, /allowed_models/],
    [{ ignored_providers: ["p".repeat(257)] }, /ignored_providers/],
    [{ allowed_data_regions: ["moon"] }, /allowed_data_regions/],
    [{ enforce_zdr_anthropic: "on" }, /enforce_zdr_anthropic/],
    [{ content_filter_builtins: [{ slug: "", action: "redact" }] }, /content_filter_builtins\[0\]\.slug/],
    [{ content_filters: [3] }, /content_filters/],
    [{ content_filter_builtins: [{ slug: "person-name", action: "redact" }] }, /not available in this gateway/],
    [{ content_filters: [{ pattern: "[", action: "block" }] }, /content_filters\[0\]\.pattern '\['/],
  ];
  for (const [body, message] of cases)
    assertError(await patchGuardrail(gw, id, body), 400, message, JSON.stringify(body).slice(0, 80));
  const after = await getGuardrail(gw, id);
  assert.is(at(after.body, "data", "name"), "keep");
  assert.is(at(after.body, "data", "updated_at"), null, "no refused update counts as an update");
});

test(
  "DELETE /guardrails/{id}: {deleted: true}; assignments go with it; " +
    "a workspace's default is a 409 until replaced",
  async ({ gw }) => {
    const guardrail = await newGuardrail(gw, { name: "doomed" });
    const id = guardrail.id as string;
    const key = await newKey(gw);
    const member = await newMember(gw);
    assert.is((await assignKeys(gw, id, [key.hash])).status, 200);
    assert.is((await assignMembers(gw, id, [member])).status, 200);
    const workspaceId = await newWorkspace(gw, "guardrail-default-ws", { default_guardrail_id: id });
    assert.is((await WorkspaceRow.findByPk(workspaceId))?.defaultGuardrailId, id);
    const refused = await call(gw.url, "DELETE", `/api/v1/guardrails/${id}`, { key: gw.key });
    assertError(refused, 409, /default guardrail of workspace 'guardrail-default-ws.*default_guardrail_id/);
    const other = await newGuardrail(gw, { name: "replacement" });
    const replaced = await call(gw.url, "PATCH", `/api/v1/workspaces/${workspaceId}`, {
      key: gw.key,
      body: { default_guardrail_id: other.id },
    });
    assert.is(replaced.status, 200, replaced.text);

    const res = await call(gw.url, "DELETE", `/api/v1/guardrails/${id}`, { key: gw.key });
    assert.is(res.status, 200, res.text);
    assert.equal(res.body, { deleted: true });
    assertError(await getGuardrail(gw, id), 404);
    assertError(
      await call(gw.url, "DELETE", `/api/v1/guardrails/${id}`, { key: gw.key }),
      404,
      undefined,
      "second delete",
    );
    assert.is(await GuardrailKeyAssignmentRow.count({ where: { guardrailId: id } }), 0);
    assert.is(await GuardrailMemberAssignmentRow.count({ where: { guardrailId: id } }), 0);
    assert.is((await WorkspaceRow.findByPk(workspaceId))?.defaultGuardrailId, other.id);
    // The key itself is untouched.
    assert.is((await call(gw.url, "GET", "/api/v1/key", { key: key.secret })).status, 200);
  },
);

test.run();
