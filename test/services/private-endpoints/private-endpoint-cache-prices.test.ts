import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { startTlsUpstream, type TlsUpstream } from "../../support/tls-upstream.js";
import { PrivateEndpointRow } from "../../../server/platform/db/governance-models.js";
import { privateEndpointsOf } from "../../../server/engine/catalog/private-endpoint-catalog.js";

/**
 * A private endpoint's negotiated prompt cache prices: accepted on creation, shown in its
 * `pricing` only when set, and carried into the catalog endpoint its calls are billed by.
 */
interface Ctx {
  gw: TestGateway;
  upstream: TlsUpstream;
  key: string;
}
const test = suite<Ctx>("private endpoint cache prices");

test.before(async (ctx) => {
  ctx.upstream = await startTlsUpstream();
  const catalog = await writeCatalogFile({
    providers: [{ slug: "catalog", kind: "openai", base_url: "https://catalog.example/v1", api_key: "" }],
    models: [
      {
        id: "openai/gpt-4o",
        name: "GPT-4o",
        context_length: 8192,
        endpoints: [
          { provider: "catalog", upstream_model_id: "gpt-4o", pricing: { prompt: "0.000001", completion: "0.000002" } },
        ],
      },
    ],
  });
  ctx.gw = await startTestGateway({
    GATEWAY_CONFIG: catalog,
    GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS: "localhost",
    GATEWAY_PRIVATE_ENDPOINT_CA_FILE: ctx.upstream.certFile,
  });
  ctx.key = (await seedOrganization("pe-cache", ["private_endpoints"])).key;
  const credential = await call(ctx.gw.url, "POST", "/api/v1/byok", {
    key: ctx.key,
    body: { provider: "openai", key: "sk-openai-test-cache-5c1d9e0f7a2b" },
  });
  assert.is(credential.status, 201, credential.text);
});
test.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.stop();
});

type Json = Record<string, unknown>;

async function create({ gw, upstream, key }: Ctx, pricing: Json): Promise<Json> {
  const body = {
    model_permaslug: "openai/gpt-4o",
    provider_slug: "openai",
    upstream_model_id: "gpt-test",
    base_url: `${upstream.url}/v1`,
    pricing,
  };
  const res = await call(gw.url, "POST", "/api/v1/private-endpoints", { key, body });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Json;
}

test("cache prices are stored, shown, and priced into the catalog endpoint", async (ctx) => {
  const pricing = {
    prompt: "0.0000025",
    completion: "0.00001",
    input_cache_read: "0.00000025",
    input_cache_write: "0.000003125",
  };
  const created = await create(ctx, pricing);
  assert.equal(created.pricing, pricing);
  const got = await call(ctx.gw.url, "GET", `/api/v1/private-endpoints/${String(created.id)}`, { key: ctx.key });
  assert.equal(at(got.body, "data", "pricing"), pricing);
  const row = await PrivateEndpointRow.findByPk(String(created.id));
  const [endpoint] = privateEndpointsOf(ctx.gw.gateway.deps.engine.catalog, [row!]);
  assert.equal(endpoint!.pricing, {
    prompt: "0.0000025",
    completion: "0.00001",
    image: "0",
    request: "0",
    inputCacheRead: "0.00000025",
    inputCacheWrite: "0.000003125",
  });
});

test("without cache prices: absent from pricing and from the catalog endpoint", async (ctx) => {
  const created = await create(ctx, { prompt: "0.0000025", completion: "0.00001" });
  assert.equal(created.pricing, { prompt: "0.0000025", completion: "0.00001" });
  const row = await PrivateEndpointRow.findByPk(String(created.id));
  const [endpoint] = privateEndpointsOf(ctx.gw.gateway.deps.engine.catalog, [row!]);
  assert.equal(endpoint!.pricing, { prompt: "0.0000025", completion: "0.00001", image: "0", request: "0" });
});

test("a cache price that is not a decimal string is a 400 naming it", async (ctx) => {
  const body = {
    model_permaslug: "openai/gpt-4o",
    provider_slug: "openai",
    upstream_model_id: "gpt-test",
    base_url: `${ctx.upstream.url}/v1`,
  };
  const res = await call(ctx.gw.url, "POST", "/api/v1/private-endpoints", {
    key: ctx.key,
    body: { ...body, pricing: { prompt: "0.1", completion: "0.1", input_cache_write: "-1" } },
  });
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /pricing\.input_cache_write/);
});

test.run();
