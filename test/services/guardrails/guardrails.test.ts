import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import {
  GuardrailKeyAssignmentRow,
  GuardrailMemberAssignmentRow,
} from "../../../server/platform/db/governance-models.js";
import { WorkspaceRow } from "../../../server/platform/db/models.js";
import { at, call, type Reply } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID } from "../../support/shapes.js";

const test = suite<{ gw: TestGateway; other: { key: string; workspaceId: string } }>("guardrails");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.other = await seedOrganization("guardrails-other-org");
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const MISSING_ID = "00000000-0000-4000-8000-000000000000";

const GUARDRAIL_FIELDS = [
  "id",
  "name",
  "description",
  "workspace_id",
  "created_at",
  "updated_at",
  "limit_usd",
  "reset_interval",
  "include_byok_in_budgets",
  "allowed_models",
  "ignored_models",
  "allowed_providers",
  "ignored_providers",
  "allowed_data_regions",
  "enforce_zdr",
  "enforce_zdr_anthropic",
  "enforce_zdr_google",
  "enforce_zdr_openai",
  "enforce_zdr_other",
  "enforce_zdr_xai",
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
  "content_filter_builtins",
  "content_filters",
];

type Json = Record<string, unknown>;

const createGuardrail = (gw: TestGateway, body: Json, key = gw.key) =>
  call(gw.url, "POST", "/api/v1/guardrails", { key, body });
const getGuardrail = (gw: TestGateway, id: string, key = gw.key) =>
  call(gw.url, "GET", `/api/v1/guardrails/${id}`, { key });
const patchGuardrail = (gw: TestGateway, id: string, body: Json, key = gw.key) =>
  call(gw.url, "PATCH", `/api/v1/guardrails/${id}`, { key, body });
const assignKeys = (gw: TestGateway, id: string, keyHashes: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/keys`, { key, body: { key_hashes: keyHashes } });
const unassignKeys = (gw: TestGateway, id: string, keyHashes: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/keys/remove`, { key, body: { key_hashes: keyHashes } });
const assignMembers = (gw: TestGateway, id: string, memberUserIds: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/members`, {
    key,
    body: { member_user_ids: memberUserIds },
  });
const unassignMembers = (gw: TestGateway, id: string, memberUserIds: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/members/remove`, {
    key,
    body: { member_user_ids: memberUserIds },
  });

async function newGuardrail(gw: TestGateway, body: Json = {}, key = gw.key): Promise<Json> {
  const res = await createGuardrail(gw, { name: "guardrail", ...body }, key);
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Json;
}

/** A key of the bootstrap organization: its secret and its hash. */
async function newKey(
  gw: TestGateway,
  body: Json = {},
): Promise<{ secret: string; hash: string; label: string; name: string }> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "plain", ...body } });
  assert.is(res.status, 201, res.text);
  return {
    secret: at(res.body, "key") as string,
    hash: at(res.body, "data", "hash") as string,
    label: at(res.body, "data", "label") as string,
    name: at(res.body, "data", "name") as string,
  };
}

let memberCounter = 0;
async function newMember(gw: TestGateway): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/organization/members", {
    key: gw.key,
    body: { email: `guard-${++memberCounter}@example.com` },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function newWorkspace(gw: TestGateway, slug: string, body: Json = {}, key = gw.key): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key, body: { name: slug, slug, ...body } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

async function callerWorkspace(gw: TestGateway, key = gw.key): Promise<string> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key });
  return at(res.body, "data", "workspace_id") as string;
}

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

// ---------------------------------------------------------------------------------------------
// Create and get
// ---------------------------------------------------------------------------------------------

test("POST /guardrails with only a name: 201 with every field of 2.12 and its defaults", async ({ gw }) => {
  const before = Date.now();
  const res = await createGuardrail(gw, { name: "Minimal" });
  assert.is(res.status, 201, res.text);
  const data = at(res.body, "data") as Json;
  for (const field of GUARDRAIL_FIELDS) assert.ok(field in data, `missing ${field}`);
  assert.match(String(data.id), UUID);
  assert.is(data.name, "Minimal");
  assert.is(data.description, null);
  assert.is(data.workspace_id, await callerWorkspace(gw), "defaults to the caller key's workspace");
  assert.match(String(data.created_at), ISO);
  assert.ok(Math.abs(Date.parse(String(data.created_at)) - before) < 60_000);
  assert.is(data.updated_at, null);
  assert.is(data.limit_usd, null);
  assert.is(data.reset_interval, null);
  assert.is(data.include_byok_in_budgets, false);
  for (const list of [
    "allowed_models",
    "ignored_models",
    "allowed_providers",
    "ignored_providers",
    "allowed_data_regions",
    "content_filters",
  ]) {
    assert.is(data[list], null, list);
  }
  for (const flag of [
    "enforce_zdr",
    "enforce_zdr_anthropic",
    "enforce_zdr_google",
    "enforce_zdr_openai",
    "enforce_zdr_other",
    "enforce_zdr_xai",
  ]) {
    assert.is(data[flag], null, flag);
  }
  assert.is(data.enable_free_model_publication, false);
  assert.is(data.enable_free_model_training, false);
  assert.is(data.enable_paid_model_training, false);
  assert.equal(data.content_filter_builtins, []);
});

test("POST /guardrails with every field: each value round-trips through create and GET", async ({ gw }) => {
  const workspaceId = await newWorkspace(gw, "guardrail-full");
  const body = {
    name: "Everything",
    description: "All the fields",
    workspace_id: workspaceId.toUpperCase(),
    limit_usd: 12.5,
    reset_interval: "monthly",
    include_byok_in_budgets: true,
    allowed_models: ["openai/gpt-4o", "anthropic/claude-3.5-sonnet", "openai/gpt-4o"],
    ignored_models: ["acme/bad"],
    allowed_providers: ["openai", "anthropic"],
    ignored_providers: ["sketchy"],
    allowed_data_regions: ["europe", "us"],
    enforce_zdr: false,
    enforce_zdr_anthropic: true,
    enforce_zdr_google: false,
    enforce_zdr_openai: true,
    enforce_zdr_other: false,
    enforce_zdr_xai: true,
    enable_free_model_publication: true,
    enable_free_model_training: true,
    enable_paid_model_training: true,
    content_filter_builtins: [
      { slug: "email", action: "redact" },
      { slug: "credit-card", label: "[CARD]", action: "block" },
      { slug: "regex-prompt-injection", action: "flag" },
    ],
    content_filters: [
      { pattern: "secret-\\d+", action: "redact", label: "[SECRET]" },
      { pattern: "(?i)project zeus", action: "block" },
    ],
  };
  const created = await createGuardrail(gw, body);
  assert.is(created.status, 201, created.text);
  const id = at(created.body, "data", "id") as string;
  const fetched = await getGuardrail(gw, id);
  assert.is(fetched.status, 200, fetched.text);
  assert.equal(at(fetched.body, "data"), at(created.body, "data"), "GET shows what create returned");
  const data = at(fetched.body, "data") as Json;
  assert.is(data.name, "Everything");
  assert.is(data.description, "All the fields");
  assert.is(data.workspace_id, workspaceId);
  assert.is(data.limit_usd, 12.5);
  assert.is(data.reset_interval, "monthly");
  assert.is(data.include_byok_in_budgets, true);
  assert.equal(data.allowed_models, ["openai/gpt-4o", "anthropic/claude-3.5-sonnet"], "duplicates collapse");
  assert.equal(data.ignored_models, ["acme/bad"]);
  assert.equal(data.allowed_providers, ["openai", "anthropic"]);
  assert.equal(data.ignored_providers, ["sketchy"]);
  assert.equal(data.allowed_data_regions, ["europe", "us"]);
  assert.is(data.enforce_zdr, false);
  assert.is(data.enforce_zdr_anthropic, true);
  assert.is(data.enforce_zdr_google, false);
  assert.is(data.enforce_zdr_openai, true);
  assert.is(data.enforce_zdr_other, false);
  assert.is(data.enforce_zdr_xai, true);
  assert.is(data.enable_free_model_publication, true);
  assert.is(data.enable_free_model_training, true);
  assert.is(data.enable_paid_model_training, true);
  assert.equal(data.content_filter_builtins, [
    { slug: "email", label: "[EMAIL]", action: "redact" },
    { slug: "credit-card", label: "[CARD]", action: "block" },
    { slug: "regex-prompt-injection", label: "[REGEX_PROMPT_INJECTION]", action: "flag" },
  ]);
  assert.equal(data.content_filters, body.content_filters);
  assert.is(data.updated_at, null);
});

test("POST /guardrails: limit_usd alone is a one-time budget; [] lists are stored as null", async ({ gw }) => {
  const data = await newGuardrail(gw, {
    limit_usd: 0,
    allowed_models: [],
    content_filters: [],
    allowed_data_regions: [],
  });
  assert.is(data.limit_usd, 0);
  assert.is(data.reset_interval, null);
  assert.is(data.allowed_models, null);
  assert.is(data.content_filters, null);
  assert.is(data.allowed_data_regions, null);
  const boundary = await newGuardrail(gw, {
    name: "n".repeat(200),
    description: "d".repeat(1000),
    allowed_models: ["m".repeat(256)],
  });
  assert.is(boundary.name, "n".repeat(200));
  assert.is(boundary.description, "d".repeat(1000));
  assert.equal(boundary.allowed_models, ["m".repeat(256)]);
});

test("POST /guardrails: bad input gives 400 naming the field, and creates nothing", async ({ gw }) => {
  const cases: Array<[Json, RegExp]> = [
    [{}, /name/],
    [{ name: "" }, /name/],
    [{ name: "x".repeat(201) }, /name/],
    [{ name: 42 }, /name/],
    [{ name: "x", description: "d".repeat(1001) }, /description/],
    [{ name: "x", limit_usd: -0.01 }, /limit_usd/],
    [{ name: "x", limit_usd: "5" }, /limit_usd/],
    [{ name: "x", reset_interval: "monthly" }, /reset_interval/],
    [{ name: "x", limit_usd: 5, reset_interval: "yearly" }, /reset_interval/],
    [{ name: "x", limit_usd: 5, reset_interval: "lifetime" }, /reset_interval/],
    [{ name: "x", include_byok_in_budgets: "yes" }, /include_byok_in_budgets/],
    [{ name: "x", allowed_models: "openai/gpt-4o" }, /allowed_models/],
    [{ name: "x", allowed_models: [""] }, /allowed_models/],
    [{ name: "x", ignored_models: ["m".repeat(257)] }, /ignored_models/],
    [{ name: "x", allowed_providers: [1] }, /allowed_providers/],
    [{ name: "x", ignored_providers: [""] }, /ignored_providers/],
    [{ name: "x", allowed_data_regions: ["mars"] }, /allowed_data_regions/],
    [{ name: "x", allowed_data_regions: ["EU"] }, /allowed_data_regions/],
    [{ name: "x", enforce_zdr: "true" }, /enforce_zdr/],
    [{ name: "x", enforce_zdr_openai: 1 }, /enforce_zdr_openai/],
    [{ name: "x", enable_paid_model_training: "no" }, /enable_paid_model_training/],
    [{ name: "x", content_filter_builtins: [{ slug: "email" }] }, /content_filter_builtins\[0\]\.action/],
    [{ name: "x", content_filter_builtins: [{ action: "redact" }] }, /content_filter_builtins\[0\]\.slug/],
    [
      { name: "x", content_filter_builtins: [{ slug: "email", action: "delete" }] },
      /content_filter_builtins\[0\]\.action/,
    ],
    [
      { name: "x", content_filter_builtins: [{ slug: "email", action: "redact", label: "l".repeat(101) }] },
      /content_filter_builtins\[0\]\.label/,
    ],
    [
      {
        name: "x",
        content_filter_builtins: [
          { slug: "email", action: "redact" },
          { slug: "email", action: "block" },
        ],
      },
      /content_filter_builtins/,
    ],
    [{ name: "x", content_filters: ["not an object"] }, /content_filters/],
    [{ name: "x", content_filters: { pattern: "a" } }, /content_filters/],
    // What the gateway cannot enforce is refused, naming what it accepts.
    [
      { name: "x", content_filter_builtins: [{ slug: "passport", action: "redact" }] },
      /unknown slug 'passport'; accepted slugs: email, credit-card, ssn, ip-address, phone, regex-prompt-injection/,
    ],
    [
      { name: "x", content_filter_builtins: [{ slug: "person-name", action: "redact" }] },
      /'person-name' is not available in this gateway/,
    ],
    [
      { name: "x", content_filter_builtins: [{ slug: "address", action: "block" }] },
      /'address' is not available in this gateway/,
    ],
    [
      { name: "x", content_filter_builtins: [{ slug: "email", action: "flag" }] },
      /slug 'email' does not take action 'flag'; accepted: redact, block/,
    ],
    [
      { name: "x", content_filters: [{ pattern: "(?<=a)b", action: "redact" }] },
      /content_filters\[0\]\.pattern '\(\?<=a\)b' is not a pattern RE2 accepts/,
    ],
    [
      {
        name: "x",
        content_filters: [
          { pattern: "ok", action: "redact" },
          { pattern: "(a", action: "block" },
        ],
      },
      /content_filters\[1\]\.pattern '\(a'/,
    ],
    [
      { name: "x", content_filters: [{ pattern: "a*", action: "redact" }] },
      /content_filters\[0\]\.pattern 'a\*' matches the empty text/,
    ],
    [{ name: "x", content_filters: [{ pattern: "a" }] }, /content_filters\[0\]\.action must be one of redact, block/],
    [{ name: "x", content_filters: [{ pattern: "a", action: "delete" }] }, /content_filters\[0\]\.action/],
    [
      { name: "x", content_filters: [{ pattern: "a", action: "flag" }] },
      /content_filters\[0\]\.action must be one of redact, block/,
    ],
    [{ name: "x", content_filters: [{ action: "redact" }] }, /content_filters\[0\]\.pattern is required/],
    [{ name: "x", content_filters: [{ pattern: "a", action: "redact", label: 7 }] }, /content_filters\[0\]\.label/],
    [
      { name: "x", content_filters: [{ pattern: "a", action: "redact", flags: "i" }] },
      /content_filters\[0\]: unknown field 'flags'/,
    ],
    [{ name: "x", workspace_id: "not-a-uuid" }, /workspace_id/],
  ];
  const before = await call(gw.url, "GET", "/api/v1/guardrails", { key: gw.key });
  for (const [body, message] of cases)
    assertError(await createGuardrail(gw, body), 400, message, JSON.stringify(body).slice(0, 100));
  const after = await call(gw.url, "GET", "/api/v1/guardrails", { key: gw.key });
  assert.is(at(after.body, "total_count"), at(before.body, "total_count"));
});

test("POST /guardrails: malformed JSON is 400; a workspace that is not the caller's is 404", async ({ gw, other }) => {
  assertError(await call(gw.url, "POST", "/api/v1/guardrails", { key: gw.key, raw: '{"name":' }), 400);
  assertError(await createGuardrail(gw, { name: "x", workspace_id: other.workspaceId }), 404, /Workspace/);
  assertError(await createGuardrail(gw, { name: "x", workspace_id: MISSING_ID }), 404, /Workspace/);
});

test("GET /guardrails/{id}: 404 for unknown and for another organization's guardrail, 400 for a bad id", async ({
  gw,
  other,
}) => {
  const theirs = await newGuardrail(gw, { name: "theirs" }, other.key);
  assertError(await getGuardrail(gw, theirs.id as string), 404);
  assertError(await getGuardrail(gw, MISSING_ID), 404);
  assertError(await getGuardrail(gw, "not-a-uuid"), 400, /id/);
  // The owner sees it, in either letter case.
  assert.is((await getGuardrail(gw, (theirs.id as string).toUpperCase(), other.key)).status, 200);
});

// ---------------------------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------------------------

const ROUTES: Array<[string, (id: string) => string, Json | undefined]> = [
  ["POST", () => "/api/v1/guardrails", { name: "x" }],
  ["GET", () => "/api/v1/guardrails", undefined],
  ["GET", (id) => `/api/v1/guardrails/${id}`, undefined],
  ["PATCH", (id) => `/api/v1/guardrails/${id}`, { name: "y" }],
  ["DELETE", (id) => `/api/v1/guardrails/${id}`, undefined],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/keys`, { key_hashes: ["a"] }],
  ["GET", (id) => `/api/v1/guardrails/${id}/assignments/keys`, undefined],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/keys/remove`, { key_hashes: ["a"] }],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/members`, { member_user_ids: ["a"] }],
  ["GET", (id) => `/api/v1/guardrails/${id}/assignments/members`, undefined],
  ["POST", (id) => `/api/v1/guardrails/${id}/assignments/members/remove`, { member_user_ids: ["a"] }],
];

test("every guardrail operation: 401 without a key, 403 for a non-management key, and nothing changes", async ({
  gw,
}) => {
  const guardrail = await newGuardrail(gw, { name: "protected" });
  const plain = await newKey(gw);
  for (const [method, path, body] of ROUTES) {
    const url = path(guardrail.id as string);
    assertError(await call(gw.url, method, url, { body }), 401, undefined, `${method} ${url}`);
    assertError(
      await call(gw.url, method, url, { key: plain.secret, body }),
      403,
      /management keys/,
      `${method} ${url}`,
    );
  }
  const after = await getGuardrail(gw, guardrail.id as string);
  assert.is(at(after.body, "data", "name"), "protected");
});

test("every operation on one guardrail: 404 for another organization's guardrail and for an unknown id", async ({
  gw,
  other,
}) => {
  const theirs = await newGuardrail(gw, { name: "theirs" }, other.key);
  for (const [method, path, body] of ROUTES.slice(2)) {
    for (const id of [theirs.id as string, MISSING_ID]) {
      assertError(
        await call(gw.url, method, path(id), { key: gw.key, body }),
        404,
        /Guardrail/,
        `${method} ${path(id)}`,
      );
    }
    assertError(await call(gw.url, method, path("nope"), { key: gw.key, body }), 400, /id/, `${method} bad id`);
  }
  assert.is(at((await getGuardrail(gw, theirs.id as string, other.key)).body, "data", "name"), "theirs", "untouched");
});

// ---------------------------------------------------------------------------------------------
// List
// ---------------------------------------------------------------------------------------------

test("GET /guardrails: one workspace, newest first, paged with total_count", async ({ gw, other }) => {
  const workspaceId = await newWorkspace(gw, "guardrail-list");
  const names = ["first", "second", "third"];
  const ids: string[] = [];
  for (const name of names) ids.push((await newGuardrail(gw, { name, workspace_id: workspaceId })).id as string);
  const list = (query: string) =>
    call(gw.url, "GET", `/api/v1/guardrails?workspace_id=${workspaceId}${query}`, { key: gw.key });

  const all = await list("");
  assert.is(all.status, 200, all.text);
  // The workspace's own default guardrail, created with it, is the oldest.
  assert.is(at(all.body, "total_count"), 4);
  const data = at(all.body, "data") as Json[];
  assert.equal(
    data.map((g) => g.name),
    ["third", "second", "first", "Default guardrail"],
  );
  for (const field of GUARDRAIL_FIELDS) assert.ok(field in data[0]!, `missing ${field}`);

  const page = await list("&offset=1&limit=1");
  assert.is(at(page.body, "total_count"), 4);
  assert.equal(
    (at(page.body, "data") as Json[]).map((g) => g.id),
    [ids[1]],
  );
  const beyond = await list("&offset=10");
  assert.equal(at(beyond.body, "data"), []);
  assert.is(at(beyond.body, "total_count"), 4);

  // Without a filter: the caller key's workspace, which holds none of these.
  const own = await call(gw.url, "GET", "/api/v1/guardrails", { key: gw.key });
  assert.is(own.status, 200, own.text);
  const ownIds = (at(own.body, "data") as Json[]).map((g) => g.id);
  for (const id of ids) assert.not.ok(ownIds.includes(id));

  for (const query of ["&limit=0", "&limit=101", "&offset=-1", "&limit=abc"])
    assertError(await list(query), 400, /limit|offset/, query);
  assertError(await call(gw.url, "GET", "/api/v1/guardrails?workspace_id=nope", { key: gw.key }), 400, /workspace_id/);
  assertError(await call(gw.url, "GET", `/api/v1/guardrails?workspace_id=${other.workspaceId}`, { key: gw.key }), 404);
});

// ---------------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Delete
// ---------------------------------------------------------------------------------------------

test("DELETE /guardrails/{id}: {deleted: true}; assignments go with it; a workspace's default is a 409 until replaced", async ({
  gw,
}) => {
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
});

// ---------------------------------------------------------------------------------------------
// Key assignments
// ---------------------------------------------------------------------------------------------

test("key assignments: assign counts only new keys, list shows every field, unassign counts removals", async ({
  gw,
}) => {
  const id = (await newGuardrail(gw, { name: "keys" })).id as string;
  const a = await newKey(gw, { name: "key a" });
  const b = await newKey(gw, { name: "key b" });

  let res = await assignKeys(gw, id, [a.hash, a.hash]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { assigned_count: 1 }, "duplicates in one request count once");
  res = await assignKeys(gw, id, [a.hash, b.hash]);
  assert.equal(res.body, { assigned_count: 1 }, "a already assigned");
  res = await assignKeys(gw, id, [b.hash]);
  assert.equal(res.body, { assigned_count: 0 });

  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(list.status, 200, list.text);
  assert.is(at(list.body, "total_count"), 2);
  const data = at(list.body, "data") as Json[];
  const byHash = new Map(data.map((row) => [row.key_hash, row]));
  for (const key of [a, b]) {
    const row = byHash.get(key.hash)!;
    assert.ok(row, `assignment of ${key.name}`);
    assert.equal(Object.keys(row).sort(), [
      "assigned_by",
      "created_at",
      "guardrail_id",
      "id",
      "key_hash",
      "key_label",
      "key_name",
    ]);
    assert.match(String(row.id), UUID);
    assert.is(row.guardrail_id, id);
    assert.is(row.key_label, key.label);
    assert.is(row.key_name, key.name);
    assert.match(String(row.assigned_by), /^user_/, "the bootstrap key belongs to the organization's owner");
    assert.match(String(row.created_at), ISO);
  }
  assert.is(data[0]!.key_hash, b.hash, "newest first");

  res = await unassignKeys(gw, id, [a.hash, a.hash]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { unassigned_count: 1 });
  res = await unassignKeys(gw, id, [a.hash]);
  assert.equal(res.body, { unassigned_count: 0 }, "no longer assigned");
  const after = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(after.body, "total_count"), 1);
  assert.is(at(after.body, "data", 0, "key_hash"), b.hash);
});

test("key assignments: assigned_by is the calling key's member when it has one", async ({ gw }) => {
  const member = await newMember(gw);
  const manager = await newKey(gw, { name: "member manager", is_management_key: true, creator_user_id: member });
  const id = (await newGuardrail(gw)).id as string;
  const key = await newKey(gw);
  assert.equal((await assignKeys(gw, id, [key.hash], manager.secret)).body, { assigned_count: 1 });
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(list.body, "data", 0, "assigned_by"), member);
});

test("key assignments: unknown or foreign key hashes are a 400 naming them, and nothing is assigned", async ({
  gw,
  other,
}) => {
  const id = (await newGuardrail(gw)).id as string;
  const mine = await newKey(gw);
  const theirs = await call(gw.url, "POST", "/api/v1/keys", { key: other.key, body: { name: "theirs" } });
  const theirHash = at(theirs.body, "data", "hash") as string;
  const unknown = "f".repeat(64);

  let res = await assignKeys(gw, id, [mine.hash, unknown, theirHash]);
  assertError(res, 400, /key hashes/);
  assert.ok(res.text.includes(unknown) && res.text.includes(theirHash), "names every unknown hash");
  assert.not.ok(res.text.includes(mine.hash), "does not name the known one");
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(list.body, "total_count"), 0, "the known key was not assigned either");

  assert.equal((await assignKeys(gw, id, [mine.hash])).body, { assigned_count: 1 });
  res = await unassignKeys(gw, id, [mine.hash, unknown]);
  assertError(res, 400, /key hashes/);
  assert.ok(res.text.includes(unknown));
  const still = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys`, { key: gw.key });
  assert.is(at(still.body, "total_count"), 1, "nothing was unassigned");

  for (const hashes of [[], [""], "abc", [1], undefined]) {
    assertError(await assignKeys(gw, id, hashes), 400, /key_hashes/, JSON.stringify(hashes));
    assertError(await unassignKeys(gw, id, hashes), 400, /key_hashes/, JSON.stringify(hashes));
  }
});

test("key assignments list: offset/limit paging with total_count; limit 0 and 101 are 400", async ({ gw }) => {
  const id = (await newGuardrail(gw)).id as string;
  const hashes: string[] = [];
  for (let i = 0; i < 5; i++) hashes.push((await newKey(gw, { name: `paged ${i}` })).hash);
  assert.equal((await assignKeys(gw, id, hashes)).body, { assigned_count: 5 });
  const page = (query: string) =>
    call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/keys${query}`, { key: gw.key });

  const seen: unknown[] = [];
  for (let offset = 0; offset < 5; offset += 2) {
    const res = await page(`?offset=${offset}&limit=2`);
    assert.is(res.status, 200, res.text);
    assert.is(at(res.body, "total_count"), 5);
    seen.push(...(at(res.body, "data") as Json[]).map((row) => row.key_hash));
  }
  assert.equal([...seen].sort(), [...hashes].sort(), "pages cover every assignment exactly once");
  assert.is((at((await page("?limit=100")).body, "data") as unknown[]).length, 5);
  assert.is((at((await page("?limit=1")).body, "data") as unknown[]).length, 1);
  assert.equal(at((await page("?offset=5")).body, "data"), []);
  for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?offset=x"])
    assertError(await page(query), 400, /limit|offset/, query);
});

// ---------------------------------------------------------------------------------------------
// Member assignments
// ---------------------------------------------------------------------------------------------

test("member assignments: assigned_count counts only new members; list and unassign", async ({ gw }) => {
  const id = (await newGuardrail(gw, { name: "members" })).id as string;
  const alice = await newMember(gw);
  const bob = await newMember(gw);

  let res = await assignMembers(gw, id, [alice, alice]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { assigned_count: 1 });
  res = await assignMembers(gw, id, [alice, bob]);
  assert.equal(res.body, { assigned_count: 1 });
  res = await assignMembers(gw, id, [alice, bob]);
  assert.equal(res.body, { assigned_count: 0 });

  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.is(list.status, 200, list.text);
  assert.is(at(list.body, "total_count"), 2);
  const data = at(list.body, "data") as Json[];
  const organizationId = at(
    await call(gw.url, "GET", "/api/v1/key", { key: gw.key }),
    "body",
    "data",
    "organization_id",
  );
  for (const row of data) {
    assert.equal(Object.keys(row).sort(), [
      "assigned_by",
      "created_at",
      "guardrail_id",
      "id",
      "organization_id",
      "user_id",
    ]);
    assert.match(String(row.id), UUID);
    assert.is(row.guardrail_id, id);
    assert.is(row.organization_id, organizationId);
    assert.match(String(row.assigned_by), /^user_/, "the bootstrap key belongs to the organization's owner");
    assert.match(String(row.created_at), ISO);
  }
  assert.equal(
    data.map((row) => row.user_id),
    [bob, alice],
    "newest first",
  );
  const paged = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members?offset=1&limit=1`, {
    key: gw.key,
  });
  assert.is(at(paged.body, "total_count"), 2);
  assert.equal(
    (at(paged.body, "data") as Json[]).map((row) => row.user_id),
    [alice],
  );
  for (const query of ["?limit=0", "?limit=101", "?offset=-1"]) {
    assertError(
      await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members${query}`, { key: gw.key }),
      400,
      /limit|offset/,
      query,
    );
  }

  res = await unassignMembers(gw, id, [alice, alice]);
  assert.equal(res.body, { unassigned_count: 1 });
  res = await unassignMembers(gw, id, [alice]);
  assert.equal(res.body, { unassigned_count: 0 });
  const after = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.equal(
    (at(after.body, "data") as Json[]).map((row) => row.user_id),
    [bob],
  );
});

test("member assignments: assigned_by is the calling key's member", async ({ gw }) => {
  const admin = await newMember(gw);
  const manager = await newKey(gw, { name: "admin manager", is_management_key: true, creator_user_id: admin });
  const id = (await newGuardrail(gw)).id as string;
  const member = await newMember(gw);
  assert.equal((await assignMembers(gw, id, [member], manager.secret)).body, { assigned_count: 1 });
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.is(at(list.body, "data", 0, "assigned_by"), admin);
});

test("member assignments: unknown members are a 400 naming them and nothing is assigned; bad lists are 400", async ({
  gw,
}) => {
  const id = (await newGuardrail(gw)).id as string;
  const member = await newMember(gw);
  const res = await assignMembers(gw, id, [member, "user_nobody", "user_ghost"]);
  assertError(res, 400, /member user ids/);
  assert.ok(res.text.includes("user_nobody") && res.text.includes("user_ghost"));
  assert.not.ok(res.text.includes(member));
  const list = await call(gw.url, "GET", `/api/v1/guardrails/${id}/assignments/members`, { key: gw.key });
  assert.is(at(list.body, "total_count"), 0, "the known member was not assigned either");

  assertError(await unassignMembers(gw, id, ["user_nobody"]), 400, /member user ids/);
  for (const ids of [[], [""], "user_x", [7], undefined]) {
    assertError(await assignMembers(gw, id, ids), 400, /member_user_ids/, JSON.stringify(ids));
    assertError(await unassignMembers(gw, id, ids), 400, /member_user_ids/, JSON.stringify(ids));
  }
});

test("member assignments: members of another organization are unknown", async ({ gw, other }) => {
  const id = (await newGuardrail(gw)).id as string;
  const foreign = await call(gw.url, "POST", "/api/v1/organization/members", {
    key: other.key,
    body: { email: "foreign@example.com" },
  });
  assert.is(foreign.status, 201, foreign.text);
  const foreignId = at(foreign.body, "data", "id") as string;
  const res = await assignMembers(gw, id, [foreignId]);
  assertError(res, 400, /member user ids/);
  assert.ok(res.text.includes(foreignId));
});

test.run();
