import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO, UUID } from "../../support/shapes.js";
import {
  activate,
  assertError,
  createEndpoint,
  endpointBody,
  endpointsSuite,
  FULL_FIELDS,
  getEndpoint,
  type Json,
  newEndpoint,
  openaiBase,
  patchEndpoint,
  SUMMARY_FIELDS,
  UNKNOWN_ID,
  validate,
} from "./private-endpoints-fixture.js";

/** Create, list, get and delete private endpoints, and who may reach them. */
const test = endpointsSuite("private endpoints: records");

test(
  "POST /private-endpoints: " + "201 draft with every field of 2.11, the catalog model's identity and decimal prices",
  async (ctx) => {
    const res = await createEndpoint(
      ctx.gw,
      ctx.org.key,
      endpointBody(ctx.upstream, {
        declared_region: "europe",
        declared_zdr: true,
        pricing: { prompt: "0.0000025", completion: "0.00001" },
      }),
    );
    assert.is(res.status, 201, res.text);
    const data = at(res.body, "data") as Json;
    assert.equal(Object.keys(data).sort(), [...FULL_FIELDS].sort());
    assert.match(String(data.id), UUID);
    assert.is(data.base_url, openaiBase(ctx.upstream));
    assert.is(data.upstream_model_id, "gpt-test");
    assert.is(data.declared_region, "europe");
    assert.is(data.declared_zdr, true);
    assert.is(data.model_permaslug, "openai/gpt-4o-2024-08-06");
    assert.is(data.model_slug, "openai/gpt-4o", "the catalog model's id");
    assert.is(data.model_name, "OpenAI: GPT-4o", "the catalog model's name");
    assert.is(data.provider_slug, "openai");
    assert.is(data.provider_name, "OpenAI");
    assert.equal(data.pricing, { prompt: "0.0000025", completion: "0.00001" });
    assert.is(data.status, "draft");
    assert.match(String(data.created_at), ISO);
    assert.is(data.validated_at, null);
    const got = await getEndpoint(ctx.gw, ctx.org.key, String(data.id));
    assert.equal(at(got.body, "data"), data, "GET answers the stored record, prices as the same decimal strings");
  },
);

test("POST /private-endpoints: optional fields default to null pricing, no region and no ZDR", async (ctx) => {
  const data = await newEndpoint(ctx, {
    model_permaslug: "meta-llama/llama-3.1-8b-instruct:free",
    provider_slug: "together",
  });
  assert.is(data.pricing, null);
  assert.is(data.declared_region, null);
  assert.is(data.declared_zdr, false);
  assert.is(data.model_slug, "meta-llama/llama-3.1-8b-instruct:free");
  assert.is(data.provider_name, "Together");
});

test("POST /private-endpoints: a model named by its catalog id is stored under its canonical slug", async (ctx) => {
  const data = await newEndpoint(ctx, { model_permaslug: "openai/gpt-4o" });
  assert.equal(
    [data.model_permaslug, data.model_slug, data.model_name],
    ["openai/gpt-4o-2024-08-06", "openai/gpt-4o", "OpenAI: GPT-4o"],
  );
});

test("GET /private-endpoints: summary records of the organization only, newest first, drafts included", async (ctx) => {
  const org = await seedOrganization("pe-list", ["private_endpoints"]);
  const first = await createEndpoint(ctx.gw, org.key, endpointBody(ctx.upstream, { model_permaslug: "openai/first" }));
  const second = await createEndpoint(
    ctx.gw,
    org.key,
    endpointBody(ctx.upstream, { model_permaslug: "anthropic/second", provider_slug: "anthropic" }),
  );
  const res = await call(ctx.gw.url, "GET", "/api/v1/private-endpoints", { key: org.key });
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body as object), ["data"]);
  const data = at(res.body, "data") as Json[];
  assert.equal(
    data.map((d) => d.id),
    [at(second.body, "data", "id"), at(first.body, "data", "id")],
  );
  for (const item of data) assert.equal(Object.keys(item).sort(), [...SUMMARY_FIELDS].sort());
  assert.equal(data[0], {
    id: at(second.body, "data", "id"),
    created_at: at(second.body, "data", "created_at"),
    model_name: "Second",
    model_permaslug: "anthropic/second",
    model_slug: "anthropic/second",
    provider_name: "Anthropic",
    status: "draft",
  });
  const empty = await call(ctx.gw.url, "GET", "/api/v1/private-endpoints", {
    key: (await seedOrganization("pe-empty", ["private_endpoints"])).key,
  });
  assert.equal(empty.body, { data: [] });
});

test("DELETE /private-endpoints/{id}: {deleted: true}, then 404", async (ctx) => {
  const { id } = await newEndpoint(ctx);
  const res = await call(ctx.gw.url, "DELETE", `/api/v1/private-endpoints/${id}`, { key: ctx.org.key });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { deleted: true });
  assertError(await getEndpoint(ctx.gw, ctx.org.key, String(id)), 404);
  assertError(await call(ctx.gw.url, "DELETE", `/api/v1/private-endpoints/${id}`, { key: ctx.org.key }), 404);
});

test("403 without the private endpoints entitlement and for a non-management key; 401 without a key", async (ctx) => {
  const { id } = await newEndpoint(ctx);
  const minted = await call(ctx.gw.url, "POST", "/api/v1/keys", { key: ctx.org.key, body: { name: "plain" } });
  assert.is(minted.status, 201, minted.text);
  const plain = at(minted.body, "key") as string;
  const requests: Array<[string, string, Json | undefined]> = [
    ["GET", "/api/v1/private-endpoints", undefined],
    ["POST", "/api/v1/private-endpoints", endpointBody(ctx.upstream)],
    ["GET", `/api/v1/private-endpoints/${id}`, undefined],
    ["PATCH", `/api/v1/private-endpoints/${id}`, { upstream_model_id: "x" }],
    ["POST", `/api/v1/private-endpoints/${id}/validate`, { workspace_id: ctx.org.workspaceId }],
    ["POST", `/api/v1/private-endpoints/${id}/activate`, undefined],
    ["DELETE", `/api/v1/private-endpoints/${id}`, undefined],
  ];
  for (const [method, path, body] of requests) {
    assertError(
      await call(ctx.gw.url, method, path, { key: ctx.gw.key, ...(body ? { body } : {}) }),
      403,
      /not enabled/,
      `${method} ${path} unentitled`,
    );
    assertError(
      await call(ctx.gw.url, method, path, { key: plain, ...(body ? { body } : {}) }),
      403,
      /management keys/,
      `${method} ${path} plain key`,
    );
    assertError(await call(ctx.gw.url, method, path, body ? { body } : {}), 401, undefined, `${method} ${path} no key`);
  }
  assert.is((await getEndpoint(ctx.gw, ctx.org.key, String(id))).status, 200, "nothing was deleted");
});

test("another organization's endpoint, or an unknown one, is a 404 for every operation", async (ctx) => {
  const { id } = await newEndpoint(ctx);
  for (const target of [String(id), UNKNOWN_ID]) {
    const key = target === id ? ctx.other.key : ctx.org.key;
    const workspaceId = target === id ? ctx.other.workspaceId : ctx.org.workspaceId;
    assertError(await getEndpoint(ctx.gw, key, target), 404, /not found/, "get");
    assertError(await patchEndpoint(ctx.gw, key, target, { upstream_model_id: "x" }), 404, /not found/, "patch");
    assertError(await validate(ctx.gw, key, target, workspaceId), 404, /not found/, "validate");
    assertError(await activate(ctx.gw, key, target), 404, /not found/, "activate");
    assertError(
      await call(ctx.gw.url, "DELETE", `/api/v1/private-endpoints/${target}`, { key }),
      404,
      /not found/,
      "delete",
    );
  }
  const list = await call(ctx.gw.url, "GET", "/api/v1/private-endpoints", { key: ctx.other.key });
  assert.not.ok(list.text.includes(String(id)), "not listed for the other organization");
  assert.is((await getEndpoint(ctx.gw, ctx.org.key, String(id))).status, 200);
});

test.run();
