import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { BODY_MARKER, startTlsUpstream, type TlsUpstream } from "../../support/tls-upstream.js";
import { ISO, UUID } from "../../support/shapes.js";

interface Org {
  key: string;
  workspaceId: string;
}

interface Ctx {
  gw: TestGateway;
  upstream: TlsUpstream;
  /** Entitled organization with an OpenAI and an Anthropic credential in its default workspace. */
  org: Org;
  other: Org;
  openaiKey: string;
  anthropicKey: string;
}

const test = suite<Ctx>("private endpoints");

/** The catalog models the endpoints below serve: a private endpoint adds a deployment to one of them. */
function catalogModel(id: string, name: string, canonicalSlug?: string) {
  return {
    id,
    ...(canonicalSlug ? { canonical_slug: canonicalSlug } : {}),
    name,
    context_length: 8192,
    endpoints: [
      { provider: "catalog", upstream_model_id: id, pricing: { prompt: "0.000001", completion: "0.000002" } },
    ],
  };
}

/** GATEWAY_CONFIG of every gateway of this file. */
const writeTestCatalog = () =>
  writeCatalogFile({
    providers: [{ slug: "catalog", kind: "openai", base_url: "https://catalog.example/v1", api_key: "" }],
    models: [
      catalogModel("openai/gpt-4o", "OpenAI: GPT-4o", "openai/gpt-4o-2024-08-06"),
      catalogModel("meta-llama/llama-3.1-8b-instruct:free", "Meta: Llama 3.1 8B Instruct (free)"),
      catalogModel("openai/first", "First"),
      catalogModel("anthropic/second", "Second"),
      catalogModel("anthropic/claude-test", "Claude Test"),
    ],
  });

test.before(async (ctx) => {
  ctx.upstream = await startTlsUpstream();
  ctx.gw = await startTestGateway({
    GATEWAY_CONFIG: await writeTestCatalog(),
    // The bootstrap organization stands for one without the entitlement.
    GATEWAY_BOOTSTRAP_ENTITLEMENTS: "none",
    GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS: "localhost",
    GATEWAY_PRIVATE_ENDPOINT_CA_FILE: ctx.upstream.certFile,
    GATEWAY_PRIVATE_ENDPOINT_TIMEOUT_MS: "1000",
  });
  ctx.org = await seedOrganization("pe-main", ["private_endpoints"]);
  ctx.other = await seedOrganization("pe-other", ["private_endpoints"]);
  ctx.openaiKey = "sk-openai-test-5c1d9e0f7a2b4c6d8e0f";
  ctx.anthropicKey = "sk-ant-test-0a9b8c7d6e5f4a3b2c1d";
  await addCredential(ctx.gw, ctx.org.key, { provider: "openai", key: ctx.openaiKey });
  await addCredential(ctx.gw, ctx.org.key, { provider: "anthropic", key: ctx.anthropicKey });
});
test.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.stop();
});

const UNKNOWN_ID = "3f1c2a4e-8b7d-4c6e-9a51-0d2e7f3b6c18";
const FULL_FIELDS = [
  "id",
  "base_url",
  "upstream_model_id",
  "declared_region",
  "declared_zdr",
  "model_name",
  "model_permaslug",
  "model_slug",
  "provider_name",
  "provider_slug",
  "pricing",
  "status",
  "created_at",
  "validated_at",
];
const SUMMARY_FIELDS = ["id", "created_at", "model_name", "model_permaslug", "model_slug", "provider_name", "status"];
const CHECK_NAMES = ["credential", "destination", "reachable", "auth_ok", "model_ok"];

type Json = Record<string, unknown>;
interface Check {
  name: string;
  passed: boolean;
  message: string | null;
}

async function addCredential(gw: TestGateway, key: string, body: Json): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/byok", { key, body });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

const openaiBase = (upstream: TlsUpstream) => `${upstream.url}/v1`;

function endpointBody(upstream: TlsUpstream, overrides: Json = {}): Json {
  return {
    model_permaslug: "openai/gpt-4o-2024-08-06",
    provider_slug: "openai",
    upstream_model_id: "gpt-test",
    base_url: openaiBase(upstream),
    ...overrides,
  };
}

const createEndpoint = (gw: TestGateway, key: string, body: Json) =>
  call(gw.url, "POST", "/api/v1/private-endpoints", { key, body });
const getEndpoint = (gw: TestGateway, key: string, id: string) =>
  call(gw.url, "GET", `/api/v1/private-endpoints/${id}`, { key });
const patchEndpoint = (gw: TestGateway, key: string, id: string, body: Json) =>
  call(gw.url, "PATCH", `/api/v1/private-endpoints/${id}`, { key, body });
const validate = (gw: TestGateway, key: string, id: string, workspaceId: string) =>
  call(gw.url, "POST", `/api/v1/private-endpoints/${id}/validate`, { key, body: { workspace_id: workspaceId } });
const activate = (gw: TestGateway, key: string, id: string) =>
  call(gw.url, "POST", `/api/v1/private-endpoints/${id}/activate`, { key });

async function newEndpoint({ gw, upstream, org }: Ctx, overrides: Json = {}): Promise<Json> {
  const res = await createEndpoint(gw, org.key, endpointBody(upstream, overrides));
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Json;
}

function checksOf(res: Reply): Check[] {
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(at(res.body, "data") as object).sort(), ["checks", "passed"]);
  const checks = at(res.body, "data", "checks") as Check[];
  assert.equal(
    checks.map((c) => c.name),
    CHECK_NAMES,
  );
  for (const check of checks) assert.equal(Object.keys(check).sort(), ["message", "name", "passed"]);
  assert.is(
    at(res.body, "data", "passed"),
    checks.every((c) => c.passed),
  );
  return checks;
}

/** The first failing check is `name` with a message matching `message`; the rest are skipped. */
function assertFailsAt(res: Reply, name: string, message: RegExp): void {
  const checks = checksOf(res);
  assert.is(at(res.body, "data", "passed"), false);
  const index = CHECK_NAMES.indexOf(name);
  for (const check of checks.slice(0, index))
    assert.ok(check.passed && check.message === null, `${check.name} passed before ${name}`);
  assert.is(checks[index]!.passed, false);
  assert.match(String(checks[index]!.message), message);
  for (const check of checks.slice(index + 1)) {
    assert.is(check.passed, false);
    assert.match(String(check.message), new RegExp(`^skipped: ${name} failed`));
  }
}

function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

function assertNoLeak(res: Reply, ctx: Ctx): void {
  assert.not.ok(res.text.includes(BODY_MARKER), `no upstream body or header text: ${res.text}`);
  assert.not.ok(res.text.includes(ctx.openaiKey) || res.text.includes(ctx.anthropicKey), "no credential");
}

const requestsFor = (upstream: TlsUpstream, model: string) =>
  upstream.requests.filter((r) => at(r.body, "model") === model);

// ---------------------------------------------------------------------------------------------
// Create, list, get, delete
// ---------------------------------------------------------------------------------------------

test("POST /private-endpoints: 201 draft with every field of 2.11, the catalog model's identity and decimal prices", async (ctx) => {
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
});

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

// ---------------------------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Bad input and the destination guard
// ---------------------------------------------------------------------------------------------

test("POST /private-endpoints: 400 for each bad field, naming it", async (ctx) => {
  const cases: Array<[Json, RegExp]> = [
    [{ model_permaslug: undefined }, /model_permaslug/],
    [{ model_permaslug: "gpt-4o" }, /model_permaslug must look like author\/slug/],
    [{ model_permaslug: "OpenAI/GPT-4o" }, /model_permaslug/],
    [{ model_permaslug: "openai/gpt/4o" }, /model_permaslug/],
    [{ model_permaslug: "/gpt-4o" }, /model_permaslug/],
    [{ model_permaslug: "openai/gpt 4o" }, /model_permaslug/],
    [{ model_permaslug: "openai/gpt-5" }, /model_permaslug 'openai\/gpt-5' is not a model of this gateway's catalog/],
    [{ provider_slug: undefined }, /provider_slug/],
    [{ provider_slug: "acme" }, /provider_slug must be one of: openai, anthropic/],
    [{ upstream_model_id: undefined }, /upstream_model_id/],
    [{ upstream_model_id: "" }, /upstream_model_id/],
    [{ base_url: undefined }, /base_url is required/],
    [{ base_url: "" }, /base_url/],
    [{ base_url: "http://localhost/v1" }, /base_url must match an https:\/\/ URL/],
    [{ base_url: "ftp://localhost/v1" }, /base_url/],
    [{ base_url: "https://user:hunter2@localhost/v1" }, /base_url must not contain user credentials/],
    [{ base_url: "https://localhost/v1?api-version=1" }, /base_url must not have a query/],
    [{ base_url: "https://localhost/v1#frag" }, /base_url must not have a query or fragment/],
    [{ pricing: { prompt: "abc", completion: "0.1" } }, /pricing\.prompt/],
    [{ pricing: { prompt: "-1", completion: "0.1" } }, /pricing\.prompt/],
    [{ pricing: { prompt: "0.1" } }, /pricing\.completion/],
    [{ pricing: { prompt: "0.1", completion: 0.2 } }, /completion/],
    [{ declared_region: "mars" }, /declared_region/],
    [{ declared_zdr: "yes" }, /declared_zdr/],
  ];
  for (const [overrides, message] of cases) {
    const body = endpointBody(ctx.upstream, overrides);
    for (const [name, value] of Object.entries(overrides)) if (value === undefined) delete body[name];
    const res = await createEndpoint(ctx.gw, ctx.org.key, body);
    assertError(res, 400, message, JSON.stringify(overrides));
    assert.not.ok(res.text.includes("hunter2"), "URL credentials are never echoed");
  }
});

test("POST /private-endpoints: 422 naming the host for loopback, private, link-local, metadata and reserved destinations", async (ctx) => {
  const refused: Array<[string, string]> = [
    ["https://127.0.0.1/v1", "127.0.0.1"],
    ["https://10.0.0.1/v1", "10.0.0.1"],
    ["https://172.16.3.4/v1", "172.16.3.4"],
    ["https://192.168.1.1/v1", "192.168.1.1"],
    ["https://100.64.0.1/v1", "100.64.0.1"],
    ["https://169.254.169.254/latest/meta-data", "169.254.169.254"],
    ["https://0.0.0.0/v1", "0.0.0.0"],
    ["https://224.0.0.1/v1", "224.0.0.1"],
    ["https://255.255.255.255/v1", "255.255.255.255"],
    ["https://[::1]/v1", "::1"],
    ["https://[::]/v1", "::"],
    ["https://[fd00::1]/v1", "fd00::1"],
    ["https://[fe80::1]/v1", "fe80::1"],
    ["https://[::ffff:127.0.0.1]/v1", "::ffff:7f00:1"],
    ["https://[::ffff:169.254.169.254]/v1", "::ffff:a9fe:a9fe"],
    ["https://[64:ff9b::a00:1]/v1", "64:ff9b::a00:1"],
    // NAT64 and 6to4 carry an IPv4 address: the guard looks through them to the metadata service and private ranges.
    ["https://[64:ff9b::a9fe:a9fe]/v1", "64:ff9b::a9fe:a9fe"],
    ["https://[2002:a9fe:a9fe::]/v1", "2002:a9fe:a9fe::"],
    ["https://[2002:7f00:1::1]/v1", "2002:7f00:1::1"],
    ["https://[2002:c0a8:101::]/v1", "2002:c0a8:101::"],
    ["https://2130706433/v1", "127.0.0.1"],
  ];
  for (const [baseUrl, host] of refused) {
    const res = await createEndpoint(ctx.gw, ctx.org.key, endpointBody(ctx.upstream, { base_url: baseUrl }));
    assertError(res, 422, /not a public address/, baseUrl);
    assert.ok(String(at(res.body, "error", "message")).includes(`'${host}'`), `${baseUrl}: ${res.text}`);
  }
  const unresolvable = await createEndpoint(
    ctx.gw,
    ctx.org.key,
    endpointBody(ctx.upstream, { base_url: "https://no-such-host.invalid/v1" }),
  );
  assertError(unresolvable, 422, /'no-such-host\.invalid' could not be resolved/);
});

// ---------------------------------------------------------------------------------------------
// PATCH
// ---------------------------------------------------------------------------------------------

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

test("PATCH: 400 for a missing upstream_model_id, a null or malformed base_url; 422 for a refused destination, leaving the record", async (ctx) => {
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
});

// ---------------------------------------------------------------------------------------------
// Validate and activate
// ---------------------------------------------------------------------------------------------

test("validate passes against an OpenAI-style upstream with the BYOK key; activate; an active endpoint is frozen", async (ctx) => {
  const { id } = await newEndpoint(ctx, { upstream_model_id: "gpt-pass" });
  const res = await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId);
  const checks = checksOf(res);
  assert.is(at(res.body, "data", "passed"), true);
  for (const check of checks) assert.equal(check, { name: check.name, passed: true, message: null });
  assertNoLeak(res, ctx);

  const sent = requestsFor(ctx.upstream, "gpt-pass");
  assert.is(sent.length, 1);
  assert.is(sent[0]!.method, "POST");
  assert.is(sent[0]!.path, "/v1/chat/completions");
  assert.is(sent[0]!.authorization, `Bearer ${ctx.openaiKey}`, "the workspace's BYOK key was sent");
  assert.equal(sent[0]!.body, { model: "gpt-pass", messages: [{ role: "user", content: "ping" }], max_tokens: 1 });

  const validated = at((await getEndpoint(ctx.gw, ctx.org.key, String(id))).body, "data") as Json;
  assert.match(String(validated.validated_at), ISO);
  assert.is(validated.status, "draft");

  const activated = await activate(ctx.gw, ctx.org.key, String(id));
  assert.is(activated.status, 200, activated.text);
  assert.is(at(activated.body, "data", "status"), "active");
  assert.is(at(activated.body, "data", "validated_at"), validated.validated_at);
  const listed = (
    at((await call(ctx.gw.url, "GET", "/api/v1/private-endpoints", { key: ctx.org.key })).body, "data") as Json[]
  ).find((e) => e.id === id);
  assert.is(listed?.status, "active");

  assertError(await patchEndpoint(ctx.gw, ctx.org.key, String(id), { upstream_model_id: "gpt-other" }), 409, /active/);
  assertError(
    await patchEndpoint(ctx.gw, ctx.org.key, String(id), { upstream_model_id: "gpt-pass" }),
    409,
    /active/,
    "even a no-op",
  );
  assertError(await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId), 409, /active/);
  assertError(await activate(ctx.gw, ctx.org.key, String(id)), 409, /already active/);
  assert.is(requestsFor(ctx.upstream, "gpt-pass").length, 1, "an active endpoint is not probed again");

  const deleted = await call(ctx.gw.url, "DELETE", `/api/v1/private-endpoints/${id}`, { key: ctx.org.key });
  assert.equal(deleted.body, { deleted: true }, "an active endpoint can be deleted");
});

test("validate speaks the Anthropic messages API with x-api-key for an Anthropic endpoint", async (ctx) => {
  const { id } = await newEndpoint(ctx, {
    model_permaslug: "anthropic/claude-test",
    provider_slug: "anthropic",
    upstream_model_id: "claude-pass",
    base_url: ctx.upstream.url,
  });
  const res = await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId);
  checksOf(res);
  assert.is(at(res.body, "data", "passed"), true, res.text);
  const [sent] = requestsFor(ctx.upstream, "claude-pass");
  assert.is(sent?.path, "/v1/messages");
  assert.is(sent?.apiKey, ctx.anthropicKey);
  assert.is(sent?.anthropicVersion, "2023-06-01");
  assert.is(sent?.authorization, undefined);
  assert.equal(sent?.body, { model: "claude-pass", messages: [{ role: "user", content: "ping" }], max_tokens: 1 });
});

test("validate fails at credential without an enabled credential of the provider in the workspace", async (ctx) => {
  const created = await call(ctx.gw.url, "POST", "/api/v1/workspaces", {
    key: ctx.org.key,
    body: { name: "No keys", slug: "pe-no-keys" },
  });
  assert.is(created.status, 201, created.text);
  const workspaceId = at(created.body, "data", "id") as string;
  await addCredential(ctx.gw, ctx.org.key, {
    provider: "openai",
    key: "sk-disabled-0123456789",
    workspace_id: workspaceId,
    disabled: true,
  });
  await addCredential(ctx.gw, ctx.org.key, { provider: "groq", key: "sk-groq-0123456789", workspace_id: workspaceId });
  const { id } = await newEndpoint(ctx, { upstream_model_id: "gpt-no-credential" });
  const res = await validate(ctx.gw, ctx.org.key, String(id), workspaceId);
  assertFailsAt(res, "credential", /no enabled OpenAI BYOK credential in workspace 'pe-no-keys'/);
  assert.is(requestsFor(ctx.upstream, "gpt-no-credential").length, 0, "nothing was sent upstream");
});

test("validate failures report status codes and generic wording, never upstream text or the credential", async (ctx) => {
  const cases: Array<[string, string, RegExp]> = [
    ["mock-unauthorized", "auth_ok", /^upstream rejected the credential \(HTTP 401\)$/],
    ["mock-server-error", "model_ok", /^upstream answered HTTP 500$/],
    ["mock-redirect", "model_ok", /^upstream answered HTTP 302; redirects are not followed$/],
    ["mock-wrong-shape", "model_ok", /^the response is not an OpenAI chat completion/],
    ["mock-huge", "model_ok", /larger than 64 KiB/],
    ["mock-hang", "reachable", /^timed out: no complete HTTP response within 1000 ms$/],
  ];
  for (const [model, failing, message] of cases) {
    const { id } = await newEndpoint(ctx, { upstream_model_id: model });
    const res = await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId);
    assertFailsAt(res, failing, message);
    assertNoLeak(res, ctx);
    assert.is(requestsFor(ctx.upstream, model).length, 1, `${model}: one request, no redirect followed, no retry`);
    assert.is(at((await getEndpoint(ctx.gw, ctx.org.key, String(id))).body, "data", "validated_at"), null, model);
    assertError(await activate(ctx.gw, ctx.org.key, String(id)), 409, /validat/, model);
  }
});

test("validate: 404 for another organization's workspace, 400 without a workspace_id", async (ctx) => {
  const { id } = await newEndpoint(ctx);
  assertError(await validate(ctx.gw, ctx.org.key, String(id), ctx.other.workspaceId), 404, /Workspace/);
  assertError(await validate(ctx.gw, ctx.org.key, String(id), UNKNOWN_ID), 404, /Workspace/);
  assertError(
    await call(ctx.gw.url, "POST", `/api/v1/private-endpoints/${id}/validate`, { key: ctx.org.key, body: {} }),
    400,
    /workspace_id/,
  );
  assertError(await validate(ctx.gw, ctx.org.key, String(id), "default"), 400, /workspace_id must be a UUID/);
});

test("activate: 409 when never validated, and when changed after validation; a failing re-validation withdraws the pass", async (ctx) => {
  const never = await newEndpoint(ctx);
  assertError(await activate(ctx.gw, ctx.org.key, String(never.id)), 409, /has not passed validation/);
  assert.is(at((await getEndpoint(ctx.gw, ctx.org.key, String(never.id))).body, "data", "status"), "draft");

  const changed = await newEndpoint(ctx, { upstream_model_id: "gpt-changed" });
  assert.is(
    at((await validate(ctx.gw, ctx.org.key, String(changed.id), ctx.org.workspaceId)).body, "data", "passed"),
    true,
  );
  const patched = await patchEndpoint(ctx.gw, ctx.org.key, String(changed.id), {
    upstream_model_id: "gpt-changed",
    declared_zdr: true,
  });
  assert.is(at(patched.body, "data", "validated_at"), null);
  assertError(await activate(ctx.gw, ctx.org.key, String(changed.id)), 409, /has not passed validation/);

  // Passing again, then failing (the credential is gone): the earlier pass no longer counts.
  const org = await seedOrganization("pe-withdrawn", ["private_endpoints"]);
  const credential = await addCredential(ctx.gw, org.key, { provider: "openai", key: "sk-withdrawn-0123456789" });
  const created = await createEndpoint(ctx.gw, org.key, endpointBody(ctx.upstream));
  const id = at(created.body, "data", "id") as string;
  assert.is(at((await validate(ctx.gw, org.key, id, org.workspaceId)).body, "data", "passed"), true);
  await call(ctx.gw.url, "DELETE", `/api/v1/byok/${credential}`, { key: org.key });
  assertFailsAt(await validate(ctx.gw, org.key, id, org.workspaceId), "credential", /no enabled OpenAI/);
  assert.is(at((await getEndpoint(ctx.gw, org.key, id)).body, "data", "validated_at"), null);
  assertError(await activate(ctx.gw, org.key, id), 409, /has not passed validation/);
});

test.run();

// ---------------------------------------------------------------------------------------------
// Other allow-lists. Gateways of one process share their models, so each runs in its own suite,
// one after the other.
// ---------------------------------------------------------------------------------------------

const strict = suite<{ gw: TestGateway; upstream: TlsUpstream }>("private endpoints: no allow-list");
strict.before(async (ctx) => {
  ctx.upstream = await startTlsUpstream();
  ctx.gw = await startTestGateway({
    GATEWAY_CONFIG: await writeTestCatalog(),
    GATEWAY_PRIVATE_ENDPOINT_TIMEOUT_MS: "1000",
  });
});
strict.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.stop();
});

strict("a host name resolving to loopback is refused unless allow-listed", async ({ gw, upstream }) => {
  const org = await seedOrganization("pe-strict", ["private_endpoints"]);
  const res = await createEndpoint(gw, org.key, endpointBody(upstream));
  assertError(res, 422, /'localhost' resolves to a non-public address/);
  assert.not.ok(res.text.includes("127.0.0.1"), "the resolved address of a name is not disclosed");
});

strict.run();

const byAddress = suite<{ gw: TestGateway; upstream: TlsUpstream }>("private endpoints: IP allow-list, CA not trusted");
byAddress.before(async (ctx) => {
  ctx.upstream = await startTlsUpstream();
  ctx.gw = await startTestGateway({
    GATEWAY_CONFIG: await writeTestCatalog(),
    GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS: "127.0.0.1",
    GATEWAY_PRIVATE_ENDPOINT_TIMEOUT_MS: "1000",
  });
});
byAddress.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.stop();
});

byAddress(
  "an allow-listed IP admits names resolving to it; an untrusted certificate fails validation at reachable",
  async ({ gw, upstream }) => {
    const org = await seedOrganization("pe-by-address", ["private_endpoints"]);
    const secret = "sk-by-address-0123456789";
    await addCredential(gw, org.key, { provider: "openai", key: secret });
    const created = await createEndpoint(gw, org.key, endpointBody(upstream));
    assert.is(created.status, 201, created.text);
    assertError(
      await createEndpoint(gw, org.key, endpointBody(upstream, { base_url: "https://10.0.0.1/v1" })),
      422,
      /'10\.0\.0\.1'/,
      "other private addresses stay refused",
    );
    const res = await validate(gw, org.key, at(created.body, "data", "id") as string, org.workspaceId);
    assertFailsAt(res, "reachable", /^TLS connection failed \([A-Z_]+\)$/);
    assert.not.ok(res.text.includes(secret));
    assert.is(upstream.requests.length, 0, "no request is sent over an unverified connection");
  },
);

byAddress.run();
