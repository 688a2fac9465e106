import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { ISO, UUID } from "../../support/shapes.js";
import {
  assertError,
  callerWorkspace,
  createGuardrail,
  getGuardrail,
  GUARDRAIL_FIELDS,
  guardrailsSuite,
  type Json,
  MISSING_ID,
  newGuardrail,
  newWorkspace,
} from "./guardrails-fixture.js";

/** POST /guardrails and GET one: every field and its default, round trips, the input refused. */
const test = guardrailsSuite("guardrails: create and get");

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

test.run();
