import * as assert from "uvu/assert";
import { at } from "../../support/http.js";
import { ISO } from "../../support/shapes.js";
import {
  assertError,
  endpointsSuite,
  FULL_FIELDS,
  getEndpoint,
  type Json,
  newEndpoint,
  patchEndpoint,
  validate,
} from "./private-endpoints-fixture.js";

/** PATCH /private-endpoints/{id}: what a change keeps, clears and refuses. */
const test = endpointsSuite("private endpoints: update");

interface PatchRow {
  name: string;
  body: (base: { b1: string; b2: string }) => Json;
  expect: {
    upstream_model_id: string;
    base: "b1" | "b2";
    declared_region: string | null;
    declared_zdr: boolean;
    validation: "kept" | "cleared";
  };
}

const PATCH_RULES: PatchRow[] = [
  {
    name: "same model id, nothing else: a no-op keeps everything",
    body: () => ({ upstream_model_id: "m1" }),
    expect: { upstream_model_id: "m1", base: "b1", declared_region: "europe", declared_zdr: true, validation: "kept" },
  },
  {
    name: "same model id and the stored base_url: a no-op",
    body: ({ b1 }) => ({ upstream_model_id: "m1", base_url: b1 }),
    expect: { upstream_model_id: "m1", base: "b1", declared_region: "europe", declared_zdr: true, validation: "kept" },
  },
  {
    name: "declarations restated unchanged: a no-op",
    body: () => ({ upstream_model_id: "m1", declared_region: "europe", declared_zdr: true }),
    expect: { upstream_model_id: "m1", base: "b1", declared_region: "europe", declared_zdr: true, validation: "kept" },
  },
  {
    name: "new model id, base_url and declarations omitted: base kept, declarations cleared",
    body: () => ({ upstream_model_id: "m2" }),
    expect: { upstream_model_id: "m2", base: "b1", declared_region: null, declared_zdr: false, validation: "cleared" },
  },
  {
    name: "new base_url, declarations omitted: cleared",
    body: ({ b2 }) => ({ upstream_model_id: "m1", base_url: b2 }),
    expect: { upstream_model_id: "m1", base: "b2", declared_region: null, declared_zdr: false, validation: "cleared" },
  },
  {
    name: "new upstream with both declarations given: they apply",
    body: ({ b2 }) => ({ upstream_model_id: "m2", base_url: b2, declared_region: "us", declared_zdr: true }),
    expect: { upstream_model_id: "m2", base: "b2", declared_region: "us", declared_zdr: true, validation: "cleared" },
  },
  {
    name: "new model id with only a region given: region applies, ZDR cleared",
    body: () => ({ upstream_model_id: "m2", declared_region: "europe" }),
    expect: {
      upstream_model_id: "m2",
      base: "b1",
      declared_region: "europe",
      declared_zdr: false,
      validation: "cleared",
    },
  },
  {
    name: "same upstream, new region: ZDR kept",
    body: () => ({ upstream_model_id: "m1", declared_region: "global" }),
    expect: {
      upstream_model_id: "m1",
      base: "b1",
      declared_region: "global",
      declared_zdr: true,
      validation: "cleared",
    },
  },
  {
    name: "same upstream, region null clears it",
    body: () => ({ upstream_model_id: "m1", declared_region: null }),
    expect: { upstream_model_id: "m1", base: "b1", declared_region: null, declared_zdr: true, validation: "cleared" },
  },
  {
    name: "same upstream, ZDR withdrawn",
    body: () => ({ upstream_model_id: "m1", declared_zdr: false }),
    expect: {
      upstream_model_id: "m1",
      base: "b1",
      declared_region: "europe",
      declared_zdr: false,
      validation: "cleared",
    },
  },
  {
    name: "camelCase keys are accepted too",
    body: () => ({ upstreamModelId: "m1", declaredZdr: false }),
    expect: {
      upstream_model_id: "m1",
      base: "b1",
      declared_region: "europe",
      declared_zdr: false,
      validation: "cleared",
    },
  },
];

test("PATCH /private-endpoints/{id} follows the API's rules (table)", async (ctx) => {
  const bases = { b1: `${ctx.upstream.url}/v1`, b2: `${ctx.upstream.url}/v2` };
  for (const row of PATCH_RULES) {
    const created = await newEndpoint(ctx, {
      upstream_model_id: "m1",
      base_url: bases.b1,
      declared_region: "europe",
      declared_zdr: true,
    });
    const id = String(created.id);
    const checked = await validate(ctx.gw, ctx.org.key, id, ctx.org.workspaceId);
    assert.is(at(checked.body, "data", "passed"), true, `${row.name}: ${checked.text}`);
    const validatedAt = at((await getEndpoint(ctx.gw, ctx.org.key, id)).body, "data", "validated_at");
    assert.match(String(validatedAt), ISO);

    const res = await patchEndpoint(ctx.gw, ctx.org.key, id, row.body(bases));
    assert.is(res.status, 200, `${row.name}: ${res.text}`);
    const data = at(res.body, "data") as Json;
    assert.equal(Object.keys(data).sort(), [...FULL_FIELDS].sort(), row.name);
    assert.is(data.upstream_model_id, row.expect.upstream_model_id, row.name);
    assert.is(data.base_url, bases[row.expect.base], row.name);
    assert.is(data.declared_region, row.expect.declared_region, row.name);
    assert.is(data.declared_zdr, row.expect.declared_zdr, row.name);
    assert.is(data.validated_at, row.expect.validation === "kept" ? validatedAt : null, row.name);
    assert.is(data.status, "draft", row.name);
    for (const field of [
      "id",
      "model_permaslug",
      "model_slug",
      "model_name",
      "provider_slug",
      "provider_name",
      "pricing",
      "created_at",
    ]) {
      assert.equal(data[field], created[field], `${row.name}: ${field} untouched`);
    }
    assert.equal(at((await getEndpoint(ctx.gw, ctx.org.key, id)).body, "data"), data, `${row.name}: stored`);
  }
});

test(
  "PATCH: 400 for a missing upstream_model_id, a null or malformed base_url; " +
    "422 for a refused destination, leaving the record",
  async (ctx) => {
    const created = await newEndpoint(ctx, { declared_region: "us" });
    const id = String(created.id);
    const cases: Array<[Json, number, RegExp]> = [
      [{}, 400, /upstream_model_id is required/],
      [{ upstream_model_id: "" }, 400, /upstream_model_id/],
      [{ declared_region: "global" }, 400, /upstream_model_id/],
      [{ upstream_model_id: "m", base_url: null }, 400, /base_url cannot be null/],
      [{ upstream_model_id: "m", base_url: "http://localhost/v1" }, 400, /base_url/],
      [{ upstream_model_id: "m", base_url: "https://k:hunter2@localhost/v1" }, 400, /user credentials/],
      [{ upstream_model_id: "m", declared_region: "mars" }, 400, /declared_region/],
      [
        { upstream_model_id: "m", base_url: "https://169.254.169.254/v1" },
        422,
        /'169\.254\.169\.254' is not a public address/,
      ],
      [{ upstream_model_id: "m", base_url: "https://[::1]/v1" }, 422, /'::1'/],
    ];
    for (const [body, status, message] of cases) {
      const res = await patchEndpoint(ctx.gw, ctx.org.key, id, body);
      assertError(res, status, message, JSON.stringify(body));
      assert.not.ok(res.text.includes("hunter2"));
    }
    assertError(await patchEndpoint(ctx.gw, ctx.org.key, "not-a-uuid", { upstream_model_id: "m" }), 400, /id/);
    assert.equal(at((await getEndpoint(ctx.gw, ctx.org.key, id)).body, "data"), created, "nothing changed");
  },
);

test.run();
