import type { Test } from "uvu";
import * as assert from "uvu/assert";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { suite } from "../../support/suite.js";
import { BODY_MARKER, startTlsUpstream, type TlsUpstream } from "../../support/tls-upstream.js";

export interface Org {
  key: string;
  workspaceId: string;
}

export interface EndpointsContext {
  gw: TestGateway;
  upstream: TlsUpstream;
  /** Entitled organization with an OpenAI and an Anthropic credential in its default workspace. */
  org: Org;
  other: Org;
  openaiKey: string;
  anthropicKey: string;
}

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

/** GATEWAY_CONFIG of every gateway of the private endpoints suites. */
export const writeTestCatalog = () =>
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

/**
 * A suite with its own TLS upstream and gateway that allows private endpoints on localhost and trusts the upstream's
 * CA, and two entitled organizations.
 */
export function endpointsSuite(title: string): Test<EndpointsContext> {
  const test = suite<EndpointsContext>(title);
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
  return test;
}

export const UNKNOWN_ID = "3f1c2a4e-8b7d-4c6e-9a51-0d2e7f3b6c18";
export const FULL_FIELDS = [
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
export const SUMMARY_FIELDS = [
  "id",
  "created_at",
  "model_name",
  "model_permaslug",
  "model_slug",
  "provider_name",
  "status",
];
export const CHECK_NAMES = ["credential", "destination", "reachable", "auth_ok", "model_ok"];

export type Json = Record<string, unknown>;
export interface Check {
  name: string;
  passed: boolean;
  message: string | null;
}

export async function addCredential(gw: TestGateway, key: string, body: Json): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/byok", { key, body });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

export const openaiBase = (upstream: TlsUpstream) => `${upstream.url}/v1`;

export function endpointBody(upstream: TlsUpstream, overrides: Json = {}): Json {
  return {
    model_permaslug: "openai/gpt-4o-2024-08-06",
    provider_slug: "openai",
    upstream_model_id: "gpt-test",
    base_url: openaiBase(upstream),
    ...overrides,
  };
}

export const createEndpoint = (gw: TestGateway, key: string, body: Json) =>
  call(gw.url, "POST", "/api/v1/private-endpoints", { key, body });

export const getEndpoint = (gw: TestGateway, key: string, id: string) =>
  call(gw.url, "GET", `/api/v1/private-endpoints/${id}`, { key });

export const patchEndpoint = (gw: TestGateway, key: string, id: string, body: Json) =>
  call(gw.url, "PATCH", `/api/v1/private-endpoints/${id}`, { key, body });

export const validate = (gw: TestGateway, key: string, id: string, workspaceId: string) =>
  call(gw.url, "POST", `/api/v1/private-endpoints/${id}/validate`, { key, body: { workspace_id: workspaceId } });

export const activate = (gw: TestGateway, key: string, id: string) =>
  call(gw.url, "POST", `/api/v1/private-endpoints/${id}/activate`, { key });

export async function newEndpoint({ gw, upstream, org }: EndpointsContext, overrides: Json = {}): Promise<Json> {
  const res = await createEndpoint(gw, org.key, endpointBody(upstream, overrides));
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Json;
}

export function checksOf(res: Reply): Check[] {
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
export function assertFailsAt(res: Reply, name: string, message: RegExp): void {
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

export function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}

export function assertNoLeak(res: Reply, ctx: EndpointsContext): void {
  assert.not.ok(res.text.includes(BODY_MARKER), `no upstream body or header text: ${res.text}`);
  assert.not.ok(res.text.includes(ctx.openaiKey) || res.text.includes(ctx.anthropicKey), "no credential");
}

export const requestsFor = (upstream: TlsUpstream, model: string) =>
  upstream.requests.filter((r) => at(r.body, "model") === model);
