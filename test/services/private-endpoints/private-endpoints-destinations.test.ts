import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { startTlsUpstream, type TlsUpstream } from "../../support/tls-upstream.js";
import {
  addCredential,
  assertError,
  assertFailsAt,
  createEndpoint,
  endpointBody,
  endpointsSuite,
  type Json,
  validate,
  writeTestCatalog,
} from "./private-endpoints-fixture.js";

/** The fields a new endpoint must get right, and the destination guard: addresses refused, allow-lists, trusted CAs. */
const test = endpointsSuite("private endpoints: fields and destinations");

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

test(
  "POST /private-endpoints: " +
    "422 naming the host for loopback, private, link-local, metadata and reserved destinations",
  async (ctx) => {
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
  },
);

test.run();

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
