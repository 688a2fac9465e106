import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { startMockUpstream, MOCK_UPSTREAM_API_KEY, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * What a failure does to a key of a pool, through a gateway (server/engine/key-pools,
 * docs/providers.md "Key pools"): one tenant's request must never take a pooled provider down for
 * everyone. Each test has its own provider, so none depends on another's verdicts; the key pools
 * read a clock the suite moves, so a refused key's probe comes without waiting out its back-off.
 */
const key = (name: string) => `${MOCK_UPSTREAM_API_KEY}-${name}`;
const MINUTE = 60_000;
/** GATEWAY_KEY_COOLDOWN_MAX_SECONDS for this gateway: below the default, so the test sees the setting read. */
const COOLDOWN_MAX_S = 600;
/** One per test, so that no test reads another's verdicts; `quiet` is never called. */
const PROVIDERS = ["forbidding", "counting", "revoking", "rotating", "limited", "listed", "failing", "quiet"] as const;
type ProviderSlug = (typeof PROVIDERS)[number];

interface ProviderView {
  slug: string;
  svc_status: number;
  svc_keys: Array<{ label: string; state: string; cooling_until: string | null }>;
}

interface Ctx {
  upstream: MockUpstream;
  gw: TestGateway;
  /** A key of the same organization without management rights: another tenant's calls. */
  plainKey: string;
  /** How far the key pools' clock is ahead of the wall clock. */
  clockAhead: number;
}

const test = suite<Ctx>("key pools: verdicts that fit the failure");

test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  ctx.clockAhead = 0;
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const configFile = await writeCatalogFile({
    providers: PROVIDERS.map((slug) => ({
      slug,
      kind: "openai",
      base_url: ctx.upstream.openaiBaseUrl,
      api_keys: [key(`${slug}-1`), key(`${slug}-2`)],
      timeout_ms: 2000,
    })),
    models: PROVIDERS.map((slug) => ({
      id: `pool/${slug}`,
      name: slug,
      context_length: 8000,
      endpoints: [{ provider: slug, upstream_model_id: `${slug}-model`, pricing }],
    })),
  });
  ctx.gw = await startTestGateway(
    { GATEWAY_CONFIG: configFile, GATEWAY_KEY_COOLDOWN_MAX_SECONDS: String(COOLDOWN_MAX_S) },
    { keyPoolClock: () => Date.now() + ctx.clockAhead },
  );
  const created = await call(ctx.gw.url, "POST", "/api/v1/keys", { key: ctx.gw.key, body: { name: "another tenant" } });
  assert.is(created.status, 201, created.text);
  ctx.plainKey = at(created.body, "key") as string;
});
test.after(async (ctx) => {
  await ctx.gw?.stop();
  await ctx.upstream?.close();
});
test.before.each(({ upstream }) => upstream.reset());

function chat(base: string, apiKey: string, slug: ProviderSlug, text: string, sessionId?: string): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", {
    key: apiKey,
    body: {
      model: `pool/${slug}`,
      messages: [{ role: "user", content: text }],
      ...(sessionId ? { session_id: sessionId } : {}),
    },
  });
}

/** How many requests of this provider the mock saw. */
function requestsTo(upstream: MockUpstream, slug: ProviderSlug): number {
  return upstream.requests.filter((request) => (request.headers.authorization ?? "").startsWith(`Bearer ${key(slug)}-`))
    .length;
}

/** A session the pool serves with its `label` key while every key is usable (the choice is a hash: found by asking). */
async function sessionServedBy({ gw }: Ctx, slug: ProviderSlug, label: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const session = `session-${slug}-${label}-${i}`;
    const res = await chat(gw.url, gw.key, slug, "which key?", session);
    assert.is(res.status, 200, res.text);
    if (res.headers.get("x-gateway-provider-key") === `${slug}/${label}`) return session;
  }
  throw new Error(`no session served by ${label}`);
}

/** GET /providers as `apiKey`, the one provider's entry. */
async function providerAs({ gw }: Ctx, apiKey: string, slug: ProviderSlug): Promise<ProviderView> {
  const res = await call(gw.url, "GET", "/api/v1/providers", { key: apiKey });
  assert.is(res.status, 200, res.text);
  const found = (at(res.body, "data") as ProviderView[]).find((provider) => provider.slug === slug);
  assert.ok(found, `${slug} is listed`);
  return found;
}

const keyStates = async (ctx: Ctx, slug: ProviderSlug) =>
  (await providerAs(ctx, ctx.gw.key, slug)).svc_keys.map((k) => k.state);

test(
  "a request-caused 403 answers that call alone: " +
    "no other key is tried, and every key stays healthy for other tenants",
  async (ctx) => {
    const { gw, upstream, plainKey } = ctx;
    upstream.rule({ model: "forbidding-model", status: 403 });
    const refused = await chat(gw.url, gw.key, "forbidding", "a file of another project");
    assert.is(refused.status, 502, refused.text);
    assert.match(refused.text, /refused this request as forbidden/);
    assert.is(requestsTo(upstream, "forbidding"), 1, "the call did not walk the pool");
    upstream.reset();
    for (let i = 0; i < 10; i++) {
      const res = await chat(gw.url, plainKey, "forbidding", `another tenant's question ${i}`);
      assert.is(res.status, 200, res.text);
    }
    assert.equal(await keyStates(ctx, "forbidding"), ["healthy", "healthy"]);
  },
);

test(
  "three distinct calls with a 403 on one key within a minute refuse it; " + "the third goes to the other key",
  async (ctx) => {
    const { gw, upstream } = ctx;
    const session = await sessionServedBy(ctx, "counting", "key-1");
    upstream.reset();
    upstream.rule({ key: key("counting-1"), status: 403 });
    for (let i = 0; i < 2; i++) {
      const res = await chat(gw.url, gw.key, "counting", `forbidden ${i}`, session);
      assert.is.not(res.status, 200, res.text);
      assert.equal(await keyStates(ctx, "counting"), ["healthy", "healthy"], `still healthy after ${i + 1}`);
    }
    const third = await chat(gw.url, gw.key, "counting", "forbidden 2", session);
    assert.is(third.status, 200, third.text);
    assert.is(third.headers.get("x-gateway-provider-key"), "counting/key-2");
    assert.equal(await keyStates(ctx, "counting"), ["refused", "healthy"]);
    assert.is(requestsTo(upstream, "counting"), 4, "three 403s on key-1, then key-2 answered");
  },
);

test(
  "a server failure is retried once on another key of the pool, which stays healthy; " +
    "a second failure answers the caller",
  async (ctx) => {
    const { gw, upstream } = ctx;
    const session = await sessionServedBy(ctx, "failing", "key-1");
    upstream.reset();
    upstream.rule({ key: key("failing-1"), status: 500, times: 1 });
    const retried = await chat(gw.url, gw.key, "failing", "once", session);
    assert.is(retried.status, 200, retried.text);
    assert.is(retried.headers.get("x-gateway-provider-key"), "failing/key-2");
    assert.is(requestsTo(upstream, "failing"), 2, "key-1 failed, key-2 answered");
    assert.equal(
      await keyStates(ctx, "failing"),
      ["healthy", "healthy"],
      "a server failure says nothing about the key",
    );
    upstream.reset();
    upstream.rule({ model: "failing-model", status: 500, times: 3 });
    const failed = await chat(gw.url, gw.key, "failing", "twice", session);
    assert.is(failed.status, 502, failed.text);
    assert.is(requestsTo(upstream, "failing"), 2, "one retry on another key, not a walk of every key");
  },
);

test("a 401 still drops its key, and moves its call once: a call never marks a second key", async (ctx) => {
  const { gw, upstream, plainKey } = ctx;
  upstream.rule({ model: "revoking-model", status: 401 });
  const res = await chat(gw.url, gw.key, "revoking", "both keys answer 401");
  assert.is(res.status, 502, res.text);
  assert.is(requestsTo(upstream, "revoking"), 2, "one move to the other key");
  assert.equal((await keyStates(ctx, "revoking")).sort(), ["healthy", "refused"]);
  upstream.reset();
  assert.is((await chat(gw.url, plainKey, "revoking", "the healthy key serves")).status, 200);
});

test(
  "a refused key is probed once its back-off has passed, " + "and takes calls again when the probe succeeds",
  async (ctx) => {
    const { gw, upstream } = ctx;
    const session = await sessionServedBy(ctx, "rotating", "key-1");
    upstream.reset();
    upstream.rule({ key: key("rotating-1"), status: 401, times: 1 });
    const moved = await chat(gw.url, gw.key, "rotating", "the key was rotated", session);
    assert.is(moved.headers.get("x-gateway-provider-key"), "rotating/key-2", moved.text);
    assert.equal(await keyStates(ctx, "rotating"), ["refused", "healthy"]);
    const before = await chat(gw.url, gw.key, "rotating", "still before the probe", session);
    assert.is(before.headers.get("x-gateway-provider-key"), "rotating/key-2");
    // Past the first back-off (2 min): the session's next call probes key-1, which works again.
    ctx.clockAhead += 2 * MINUTE;
    const probe = await chat(gw.url, gw.key, "rotating", "the probe", session);
    assert.is(probe.status, 200, probe.text);
    assert.is(probe.headers.get("x-gateway-provider-key"), "rotating/key-1");
    assert.equal(await keyStates(ctx, "rotating"), ["healthy", "healthy"]);
    assert.is(
      (await chat(gw.url, gw.key, "rotating", "back home", session)).headers.get("x-gateway-provider-key"),
      "rotating/key-1",
    );
  },
);

test("a huge Retry-After rests a key for GATEWAY_KEY_COOLDOWN_MAX_SECONDS at most", async (ctx) => {
  const { gw, upstream } = ctx;
  upstream.rule({ model: "limited-model", status: 429, retryAfter: 99_999_999, times: 1 });
  const startedAt = Date.now() + ctx.clockAhead;
  const res = await chat(gw.url, gw.key, "limited", "rate limited for years");
  assert.is(res.status, 200, res.text);
  const cooling = (await providerAs(ctx, gw.key, "limited")).svc_keys.filter((k) => k.state === "cooling");
  assert.is(cooling.length, 1);
  const until = Date.parse(cooling[0]!.cooling_until ?? "");
  const endedAt = Date.now() + ctx.clockAhead;
  assert.ok(
    until >= startedAt + COOLDOWN_MAX_S * 1000 && until <= endedAt + COOLDOWN_MAX_S * 1000,
    `cooling until ${cooling[0]!.cooling_until}`,
  );
});

test(
  "only a management key sees the keys of a pool; " + "another key and the endpoint listing see the provider's status",
  async (ctx) => {
    const { gw, upstream, plainKey } = ctx;
    upstream.rule({ model: "listed-model", status: 429, retryAfter: 120, times: 1 });
    assert.is((await chat(gw.url, gw.key, "listed", "rest one key")).status, 200);
    const management = await providerAs(ctx, gw.key, "listed");
    assert.is(management.svc_status, -1);
    assert.equal(management.svc_keys.map((k) => k.state).sort(), ["cooling", "healthy"]);
    const plain = await providerAs(ctx, plainKey, "listed");
    assert.is(plain.svc_status, -1, "the pool's status, for every key");
    assert.equal(plain.svc_keys, [], "no key-level state");
    const healthy = await providerAs(ctx, plainKey, "quiet");
    assert.is(healthy.svc_status, 0);
    for (const apiKey of [plainKey, undefined]) {
      const endpoints = await call(
        gw.url,
        "GET",
        "/api/v1/models/pool/listed/endpoints",
        apiKey === undefined ? {} : { key: apiKey },
      );
      assert.is(endpoints.status, 200, endpoints.text);
      assert.is(at(endpoints.body, "data", "endpoints", 0, "status"), -1);
      assert.not.match(endpoints.text, /key-\d|cooling/);
    }
  },
);

test.run();
