import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { startTlsUpstream, type TlsUpstream } from "../../support/tls-upstream.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";
import { PrivateEndpointRow } from "../../../server/platform/db/governance-models.js";

/**
 * A private endpoint's answers are read whole only up to GATEWAY_PRIVATE_ENDPOINT_MAX_ANSWER_MIB
 * (server/engine/inference/upstream-targets.ts), below the operator's providers' 256 MiB: a
 * tenant's host cannot make the gateway hold much. Here the limit is 1 MiB, and an answer of
 * 1.5 MiB fails from the private endpoint and is served from the operator's provider.
 */
interface Ctx {
  gw: TestGateway;
  tls: TlsUpstream;
  mock: MockUpstream;
  key: string;
}
const test = suite<Ctx>("private endpoints: the answer limit");

const LIMIT_MIB = 1;
const LARGE = 1.5 * 1024 * 1024;

test.before(async (ctx) => {
  ctx.tls = await startTlsUpstream();
  ctx.mock = await startMockUpstream();
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const catalog = await writeCatalogFile({
    providers: [
      {
        slug: "operator",
        name: "Operator",
        kind: "openai",
        base_url: ctx.mock.openaiBaseUrl,
        api_key: ctx.mock.apiKey,
      },
    ],
    models: ["openai/gpt-4o", "openai/gpt-4o-mini"].map((id) => ({
      id,
      name: id,
      context_length: 8192,
      endpoints: [{ provider: "operator", upstream_model_id: "chat-a", pricing }],
    })),
  });
  ctx.gw = await startTestGateway({
    GATEWAY_CONFIG: catalog,
    GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS: "localhost",
    GATEWAY_PRIVATE_ENDPOINT_CA_FILE: ctx.tls.certFile,
    GATEWAY_PRIVATE_ENDPOINT_MAX_ANSWER_MIB: String(LIMIT_MIB),
  });
  const org = await seedOrganization("pe-answer-limit", ["private_endpoints"]);
  ctx.key = org.key;
  const credential = await call(ctx.gw.url, "POST", "/api/v1/byok", {
    key: ctx.key,
    body: { provider: "openai", key: "sk-openai-test-limit-8e2f4a6b1c3d" },
  });
  assert.is(credential.status, 201, credential.text);
  // Active from the start: validation would probe the large answer too.
  const endpoint = (modelSlug: string, upstreamModelId: string) => ({
    organizationId: org.organizationId,
    modelPermaslug: modelSlug,
    modelSlug,
    modelName: modelSlug,
    providerSlug: "openai",
    providerName: "OpenAI",
    upstreamModelId,
    baseUrl: `${ctx.tls.url}/v1`,
    status: "active",
  });
  await PrivateEndpointRow.create(endpoint("openai/gpt-4o", `mock-large-${LARGE}`));
  await PrivateEndpointRow.create(endpoint("openai/gpt-4o-mini", "mock-small"));
});
test.after(async (ctx) => {
  await ctx.gw?.stop();
  await ctx.tls?.stop();
  await ctx.mock?.close();
});

function chat({ gw, key }: Ctx, model: string, provider: string): Promise<Reply> {
  return call(gw.url, "POST", "/api/v1/chat/completions", {
    key,
    body: { model, provider: { only: [provider] }, messages: [{ role: "user", content: "Hi" }] },
  });
}

test(
  "a private endpoint's answer above " + "GATEWAY_PRIVATE_ENDPOINT_MAX_ANSWER_MIB fails with 502 naming the limit",
  async (ctx) => {
    const res = await chat(ctx, "openai/gpt-4o", "openai");
    assert.is(res.status, 502, res.text.slice(0, 500));
    assert.match(String(at(res.body, "error", "message")), new RegExp(`larger than ${LIMIT_MIB} MiB`));
    assert.ok(
      ctx.tls.requests.some((r) => (r.body as { model?: string } | undefined)?.model === `mock-large-${LARGE}`),
      "the private endpoint was called",
    );
  },
);

test("a private endpoint's answer under the limit is served", async (ctx) => {
  const res = await chat(ctx, "openai/gpt-4o-mini", "openai");
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "choices", 0, "message", "content"), "p");
});

test("the same size from the operator's provider is served", async (ctx) => {
  ctx.mock.rule({ reply: "p".repeat(LARGE), times: 1 });
  const res = await chat(ctx, "openai/gpt-4o", "operator");
  assert.is(res.status, 200, res.text.slice(0, 500));
  assert.is(String(at(res.body, "choices", 0, "message", "content")).length, LARGE);
});

test.run();
