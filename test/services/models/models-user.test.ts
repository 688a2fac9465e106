import * as assert from "uvu/assert";
import { PrivateEndpointRow } from "../../../server/platform/db/governance-models.js";
import type { TestGateway } from "../../support/gateway.js";
import { at, call, rawRequest } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { assertError, byId, get, ids, type Json, modelsSuite, TEXT_MODELS } from "./models-fixture.js";

/**
 * GET /models/user and what a caller sees: its guardrails, the regional host, the filtered catalog, private
 * endpoints.
 */
const test = modelsSuite("models api: what a caller may use");

async function newKey(gw: TestGateway, name: string): Promise<{ secret: string; hash: string }> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name } });
  assert.is(res.status, 201, res.text);
  return { secret: at(res.body, "key") as string, hash: at(res.body, "data", "hash") as string };
}

/** A fresh key governed by one guardrail with the given policy fields. */
async function keyWithGuardrail(gw: TestGateway, policy: Json): Promise<string> {
  const key = await newKey(gw, `governed ${JSON.stringify(policy)}`.slice(0, 100));
  const created = await call(gw.url, "POST", "/api/v1/guardrails", {
    key: gw.key,
    body: { name: `policy ${key.hash.slice(0, 8)}`, ...policy },
  });
  assert.is(created.status, 201, created.text);
  const assigned = await call(gw.url, "POST", `/api/v1/guardrails/${at(created.body, "data", "id")}/assignments/keys`, {
    key: gw.key,
    body: { key_hashes: [key.hash] },
  });
  assert.is(assigned.status, 200, assigned.text);
  return key.secret;
}

test("GET /models/user: 401 without a valid key; without guardrails the same list as the public one", async ({
  gw,
}) => {
  assertError(await get(gw, "/api/v1/models/user"), 401);
  assertError(await get(gw, "/api/v1/models/user", "sk-not-a-key"), 401);
  const plain = await newKey(gw, "plain models key");
  const user = await get(gw, "/api/v1/models/user", plain.secret);
  assert.equal(user.body, (await get(gw, "/api/v1/models")).body);
});

test("GET /models/user: allowed_models (by id or canonical slug) and ignored_models", async ({ gw }) => {
  const allowed = await keyWithGuardrail(gw, {
    allowed_models: ["openai/gpt-4o-2024-08-06", "anthropic/claude-sonnet"],
  });
  assert.equal(ids(await get(gw, "/api/v1/models/user", allowed)), ["openai/gpt-4o", "anthropic/claude-sonnet"]);
  const ignored = await keyWithGuardrail(gw, { ignored_models: ["openai/gpt-4o", "google/gemini-image"] });
  assert.equal(ids(await get(gw, "/api/v1/models/user", ignored)), ["anthropic/claude-sonnet"]);
});

test(
  "GET /models/user: " + "allowed/ignored providers leave models with a surviving endpoint, summarized over those",
  async ({ gw }) => {
    const onlyAnthropic = await keyWithGuardrail(gw, { allowed_providers: ["anthropic"] });
    assert.equal(ids(await get(gw, "/api/v1/models/user", onlyAnthropic)), ["anthropic/claude-sonnet"]);

    const noEu = await keyWithGuardrail(gw, {
      ignored_providers: ["azure-eu", "anthropic"],
      enable_free_model_training: true,
    });
    const res = await get(gw, "/api/v1/models/user", noEu);
    assert.equal(ids(res), ["openai/gpt-4o", "meta-llama/llama-free", "google/gemini-image"]);
    const gpt = byId(res, "openai/gpt-4o");
    assert.equal(
      gpt.pricing,
      { prompt: "0.0000025", completion: "0.00001", image: "0", request: "0" },
      "priced by the surviving endpoint",
    );
    assert.ok(
      !(gpt.supported_parameters as string[]).includes("web_search_options"),
      "parameters of surviving endpoints only",
    );
  },
);

test("GET /models/user: allowed_data_regions keeps in-region endpoints only", async ({ gw }) => {
  const eu = await keyWithGuardrail(gw, { allowed_data_regions: ["europe"] });
  const res = await get(gw, "/api/v1/models/user", eu);
  assert.equal(ids(res), ["openai/gpt-4o"]);
  const gpt = byId(res, "openai/gpt-4o");
  assert.equal(
    gpt.top_provider,
    { context_length: 64000, max_completion_tokens: null, is_moderated: false },
    "the EU endpoint's limits",
  );
  assert.equal(gpt.supported_parameters, ["temperature", "web_search_options"]);
});

test("GET /models/user: enforce_zdr, with a per-author flag overriding it", async ({ gw }) => {
  const zdr = await keyWithGuardrail(gw, { enforce_zdr: true });
  assert.equal(ids(await get(gw, "/api/v1/models/user", zdr)), ["openai/gpt-4o"]);
  const exemptAnthropic = await keyWithGuardrail(gw, { enforce_zdr: true, enforce_zdr_anthropic: false });
  assert.equal(ids(await get(gw, "/api/v1/models/user", exemptAnthropic)), [
    "openai/gpt-4o",
    "anthropic/claude-sonnet",
  ]);
  const openaiOnly = await keyWithGuardrail(gw, { enforce_zdr_openai: true, enable_free_model_training: true });
  const res = await get(gw, "/api/v1/models/user", openaiOnly);
  assert.equal(
    ids(res),
    ["openai/gpt-4o", "anthropic/claude-sonnet", "meta-llama/llama-free", "google/gemini-image"],
    "google is not openai",
  );
  assert.equal(byId(res, "openai/gpt-4o").pricing, {
    prompt: "0.000002",
    completion: "0.000008",
    image: "0",
    request: "0.0001",
  });
});

test("GET /models/user: a guardrail hides endpoints that may train on prompts unless it enables training", async ({
  gw,
}) => {
  const defaults = await keyWithGuardrail(gw, { description: "defaults only" });
  assert.equal(ids(await get(gw, "/api/v1/models/user", defaults)), [
    "openai/gpt-4o",
    "anthropic/claude-sonnet",
    "google/gemini-image",
  ]);
  const paidOnly = await keyWithGuardrail(gw, { enable_paid_model_training: true });
  assert.not.ok(
    ids(await get(gw, "/api/v1/models/user", paidOnly)).includes("meta-llama/llama-free"),
    "the free endpoint needs the free switch",
  );
});

test("regional host name: only endpoints of its region, for /models and /models/user, port and case ignored", async ({
  gw,
}) => {
  for (const host of ["eu.example.test", "EU.Example.Test:8080"]) {
    const user = await rawRequest(gw.url, "GET", "/api/v1/models/user", { key: gw.key, headers: { host } });
    assert.is(user.status, 200);
    assert.equal(
      (at(user.body, "data") as Json[]).map((m) => m.id),
      ["openai/gpt-4o"],
    );
    assert.equal(at(user.body, "data", 0, "pricing"), {
      prompt: "0.000002",
      completion: "0.000008",
      image: "0",
      request: "0.0001",
    });
    const open = await rawRequest(gw.url, "GET", "/api/v1/models?output_modalities=all", { headers: { host } });
    assert.equal(
      (at(open.body, "data") as Json[]).map((m) => m.id),
      ["openai/gpt-4o"],
    );
  }
  const elsewhere = await rawRequest(gw.url, "GET", "/api/v1/models", { headers: { host: "www.example.test" } });
  assert.equal(
    (at(elsewhere.body, "data") as Json[]).map((m) => m.id),
    TEXT_MODELS,
  );
});

test("filtered catalog: with is_filtered_model_catalog_enabled, GET /models shows a key what it may use", async ({
  gw,
}) => {
  const governed = await keyWithGuardrail(gw, { allowed_models: ["anthropic/claude-sonnet"] });
  assert.equal(ids(await get(gw, "/api/v1/models", governed)), TEXT_MODELS, "off: the public catalog");
  const on = await call(gw.url, "PATCH", "/api/v1/organization/settings", {
    key: gw.key,
    body: { is_filtered_model_catalog_enabled: true },
  });
  assert.is(on.status, 200, on.text);
  try {
    assert.equal(ids(await get(gw, "/api/v1/models", governed)), ["anthropic/claude-sonnet"]);
    assert.equal(ids(await get(gw, "/api/v1/models")), TEXT_MODELS, "anonymous callers always get the public catalog");
    assert.equal(ids(await get(gw, "/api/v1/models", gw.key)), TEXT_MODELS, "an unrestricted key sees everything");
  } finally {
    const off = await call(gw.url, "PATCH", "/api/v1/organization/settings", {
      key: gw.key,
      body: { is_filtered_model_catalog_enabled: false },
    });
    assert.is(off.status, 200, off.text);
  }
});

test(
  "private endpoints: an organization's active ones count for its lists and pricing; " +
    "drafts and other organizations' do not",
  async ({ gw }) => {
    const org = await seedOrganization("models-private");
    const base = {
      organizationId: org.organizationId,
      modelPermaslug: "anthropic/claude-sonnet",
      modelSlug: "anthropic/claude-sonnet",
      modelName: "Claude Sonnet",
      providerSlug: "anthropic",
      providerName: "Anthropic",
      upstreamModelId: "claude-private",
      baseUrl: "https://private.example",
      declaredRegion: "europe",
      declaredZdr: true,
      pricingPrompt: "0.000001",
      pricingCompletion: "0.000002",
      status: "active",
    };
    const active = await PrivateEndpointRow.create(base);
    await PrivateEndpointRow.create({
      ...base,
      modelPermaslug: "google/gemini-image",
      modelSlug: "google/gemini-image",
      status: "draft",
    });

    const own = await get(gw, "/api/v1/models/user", org.key);
    assert.equal(byId(own, "anthropic/claude-sonnet").pricing, {
      prompt: "0.000001",
      completion: "0.000002",
      image: "0",
      request: "0",
    });
    const ownEu = await rawRequest(gw.url, "GET", "/api/v1/models/user", {
      key: org.key,
      headers: { host: "eu.example.test" },
    });
    assert.equal(
      (at(ownEu.body, "data") as Json[]).map((m) => m.id),
      ["openai/gpt-4o", "anthropic/claude-sonnet"],
      "the private endpoint is in europe",
    );
    const otherEu = await rawRequest(gw.url, "GET", "/api/v1/models/user", {
      key: gw.key,
      headers: { host: "eu.example.test" },
    });
    assert.equal(
      (at(otherEu.body, "data") as Json[]).map((m) => m.id),
      ["openai/gpt-4o"],
      "not another organization's",
    );
    assert.equal(
      byId(await get(gw, "/api/v1/models"), "anthropic/claude-sonnet").pricing,
      { prompt: "0.000003", completion: "0.000015", image: "0", request: "0" },
      "the public catalog has none",
    );

    const withKey = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints", org.key);
    assert.is(withKey.status, 200, withKey.text);
    const endpoints = at(withKey.body, "data", "endpoints") as Json[];
    assert.equal(
      endpoints.map((e) => e.name),
      ["Anthropic | anthropic/claude-sonnet", "Anthropic | anthropic/claude-sonnet"],
    );
    assert.equal(endpoints[1]!.pricing, { prompt: "0.000001", completion: "0.000002", image: "0", request: "0" });
    assert.is(endpoints[1]!.context_length, 200000, "the catalog model's context length");
    const anonymous = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints");
    assert.is((at(anonymous.body, "data", "endpoints") as Json[]).length, 1);
    const others = await get(gw, "/api/v1/models/anthropic/claude-sonnet/endpoints", gw.key);
    assert.is((at(others.body, "data", "endpoints") as Json[]).length, 1);
    await active.destroy();
  },
);

test.run();
