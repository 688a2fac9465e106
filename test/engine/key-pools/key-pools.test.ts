import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { captureLogs, type CapturedLogs } from "../../support/log-lines.js";
import { eventually } from "../../support/eventually.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at, call, type Reply } from "../../support/http.js";
import { startMockUpstream, MOCK_UPSTREAM_API_KEY, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * Key pools (server/engine/key-pools): a provider that lists several keys spreads its calls over
 * them by weight, keeps a conversation on one key, rests a rate-limited key, drops a refused one,
 * and tells the other instances. The mock answers per key (its rules can name the key a request
 * presents) and refuses any key that is not its own or an extension of it.
 */
const KEY_A = `${MOCK_UPSTREAM_API_KEY}-a`;
const KEY_B = `${MOCK_UPSTREAM_API_KEY}-b`;
const KEY_C = `${MOCK_UPSTREAM_API_KEY}-c`;
const REVOKED = "revoked-key-of-the-pool";

interface Ctx {
  upstream: MockUpstream;
  gw: TestGateway;
  logs: CapturedLogs;
  configFile: string;
  /** How far the key pools' clock is ahead of the wall clock: a rest ends when the test says, not after a real wait. */
  clockAhead: number;
}

const test = suite<Ctx>("key pools: a provider with several keys");

test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  ctx.configFile = await writeCatalogFile({
    providers: [
      {
        slug: "pooled",
        kind: "openai",
        base_url: ctx.upstream.openaiBaseUrl,
        api_keys: [{ key: KEY_A, weight: 3 }, { key: KEY_B }],
        timeout_ms: 2000,
      },
      {
        slug: "revoking",
        kind: "openai",
        base_url: ctx.upstream.openaiBaseUrl,
        api_keys: [KEY_C, REVOKED],
        timeout_ms: 2000,
      },
      {
        slug: "resting",
        kind: "anthropic",
        base_url: ctx.upstream.anthropicBaseUrl,
        api_keys: [KEY_A, KEY_B],
        timeout_ms: 2000,
      },
    ],
    models: [
      {
        id: "pool/chat",
        name: "Pooled chat",
        context_length: 8000,
        endpoints: [{ provider: "pooled", upstream_model_id: "pooled-model", pricing }],
      },
      {
        id: "pool/revoking",
        name: "Revoking chat",
        context_length: 8000,
        endpoints: [{ provider: "revoking", upstream_model_id: "revoking-model", pricing }],
      },
      {
        id: "pool/resting",
        name: "Resting chat",
        context_length: 8000,
        endpoints: [{ provider: "resting", upstream_model_id: "resting-model", pricing }],
      },
    ],
  });
  ctx.logs = captureLogs("info");
  ctx.clockAhead = 0;
  ctx.gw = await startTestGateway(
    { GATEWAY_CONFIG: ctx.configFile },
    { keyPoolClock: () => Date.now() + ctx.clockAhead },
    ctx.logs.log,
  );
});
test.after(async (ctx) => {
  await ctx.gw?.stop();
  await ctx.upstream?.close();
});
test.before.each(({ upstream }) => upstream.reset());

function chat(base: string, key: string, model: string, text: string, sessionId?: string): Promise<Reply> {
  return call(base, "POST", "/api/v1/chat/completions", {
    key,
    body: { model, messages: [{ role: "user", content: text }], ...(sessionId ? { session_id: sessionId } : {}) },
  });
}

/** The keys the mock saw, in order. */
function keysSeen(upstream: MockUpstream): string[] {
  return upstream.requests.map((request) => (request.headers.authorization ?? "").replace(/^Bearer /, ""));
}

/** A session the pool serves with `label` while every key is usable (the choice is a hash: found by asking). */
async function sessionServedBy({ gw }: Ctx, label: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const session = `session-${label}-${i}`;
    const res = await chat(gw.url, gw.key, "pool/chat", "which key?", session);
    assert.is(res.status, 200, res.text);
    if (res.headers.get("x-gateway-provider-key") === `pooled/${label}`) return session;
  }
  throw new Error(`no session served by ${label}`);
}

test("calls spread over the keys by weight, and the answer and the access line name the key, never the secret", async ({
  gw,
  upstream,
  logs,
}) => {
  const served = new Map<string, number>();
  for (let i = 0; i < 200; i++) {
    const res = await chat(gw.url, gw.key, "pool/chat", `distinct question number ${i}`);
    assert.is(res.status, 200, res.text);
    const key = res.headers.get("x-gateway-provider-key") ?? "";
    served.set(key, (served.get(key) ?? 0) + 1);
  }
  const a = served.get("pooled/key-1") ?? 0;
  assert.is(a + (served.get("pooled/key-2") ?? 0), 200);
  // 3:1 is 150 of 200; the prompts are fixed, so the split is too.
  assert.ok(a > 125 && a < 175, `key-1 served ${a} of 200`);
  assert.is(keysSeen(upstream).filter((key) => key === KEY_A).length, a);
  // Every access line that names a key names it by provider and position (other tests of this file
  // may have called other pools first).
  const access = logs.lines.filter((line) => line.msg === "request" && line.providerKey !== undefined);
  assert.ok(access.filter((line) => String(line.providerKey).startsWith("pooled/")).length >= 200);
  assert.ok(access.every((line) => /^(pooled|revoking|resting)\/key-\d$/.test(String(line.providerKey))));
  assert.not.ok(logs.text().includes(KEY_A) || logs.text().includes(KEY_B));
});

test("a session sticks to its key whatever it asks", async (ctx) => {
  const session = await sessionServedBy(ctx, "key-2");
  for (let i = 0; i < 10; i++) {
    const res = await chat(ctx.gw.url, ctx.gw.key, "pool/chat", `turn ${i} of a long conversation`, session);
    assert.is(res.headers.get("x-gateway-provider-key"), "pooled/key-2");
  }
});

test(
  "a 429 sends the call at once to another key, which answers; " +
    "the key rests for its Retry-After, then serves again",
  async (ctx) => {
    const { gw, upstream } = ctx;
    const session = await sessionServedBy(ctx, "key-1");
    upstream.reset();
    upstream.rule({ key: KEY_A, status: 429, retryAfter: 60, times: 1 });
    const met = await chat(gw.url, gw.key, "pool/chat", "hello", session);
    assert.is(met.status, 200, met.text);
    assert.is(met.headers.get("x-gateway-provider-key"), "pooled/key-2");
    assert.equal(keysSeen(upstream), [KEY_A, KEY_B]);
    // Resting: the session's calls go to key-2 without trying key-1, and the endpoint shows it.
    const resting = await chat(gw.url, gw.key, "pool/chat", "again", session);
    assert.is(resting.headers.get("x-gateway-provider-key"), "pooled/key-2");
    assert.equal(keysSeen(upstream), [KEY_A, KEY_B, KEY_B]);
    const endpoints = await call(gw.url, "GET", "/api/v1/models/pool/chat/endpoints", { key: gw.key });
    assert.is(at(endpoints.body, "data", "endpoints", 0, "status"), -1, "degraded while a key rests");
    // Once the Retry-After has passed (on the pools' clock), the session is back on its key.
    ctx.clockAhead += 61_000;
    const back = await chat(gw.url, gw.key, "pool/chat", "and again", session);
    assert.is(back.headers.get("x-gateway-provider-key"), "pooled/key-1", "the rested key serves its session again");
  },
);

test("a refused key is dropped at its first 401 and not tried again before its probe; the calls still succeed", async ({
  gw,
  upstream,
  logs,
}) => {
  for (let i = 0; i < 30; i++) {
    const res = await chat(gw.url, gw.key, "pool/revoking", `question ${i} for the revoking pool`);
    assert.is(res.status, 200, res.text);
    assert.is(res.headers.get("x-gateway-provider-key"), "revoking/key-1");
  }
  // At most once here: whichever test of this file calls the revoking pool first meets the refusal.
  const seen = keysSeen(upstream);
  assert.ok(seen.filter((key) => key === REVOKED).length <= 1, "one refusal, then never again");
  assert.equal(
    gw.gateway.deps.engine.keyPools
      .health()
      .get("revoking")
      ?.map((key) => key.state),
    ["healthy", "refused"],
  );
  // A failed probe (two minutes later, on a slow run) says so again, of the same key.
  const said = logs.lines.filter((line) => line.msg.includes("refused a key of its pool"));
  assert.ok(said.length >= 1);
  assert.equal([...new Set(said.map((line) => line.poolKey))], ["key-2"]);
  assert.not.ok(logs.text().includes(REVOKED));
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(metrics, /gateway_provider_key_state\{provider="revoking",key="key-2"\} 2/);
  assert.match(metrics, /gateway_provider_key_failures_total\{provider="revoking",key="key-2",verdict="refused"\} \d+/);
});

test("GET /providers lists each provider's kind and its pool's keys by position and state, never a key", async ({
  gw,
  upstream,
}) => {
  // The revoking pool's second key is refused at its first use (whichever test used it first);
  // one key of the resting pool (only this test uses it) is rate limited.
  for (let i = 0; i < 10; i++) await chat(gw.url, gw.key, "pool/revoking", `listing ${i}`);
  upstream.rule({ model: "resting-model", status: 429, retryAfter: 120, times: 1 });
  assert.is((await chat(gw.url, gw.key, "pool/resting", "rate limited")).status, 200);
  const res = await call(gw.url, "GET", "/api/v1/providers", { key: gw.key });
  assert.is(res.status, 200, res.text);
  const providers = at(res.body, "data") as Array<{
    slug: string;
    svc_kind: string;
    svc_keys: Array<{ label: string; weight: number; state: string; cooling_until: string | null }>;
  }>;
  assert.equal(
    providers.map((p) => [p.slug, p.svc_kind]),
    [
      ["pooled", "openai"],
      ["revoking", "openai"],
      ["resting", "anthropic"],
    ],
  );
  assert.equal(
    providers[1]!.svc_keys.map((k) => [k.label, k.state, k.cooling_until]),
    [
      ["key-1", "healthy", null],
      ["key-2", "refused", null],
    ],
  );
  assert.equal(
    providers[0]!.svc_keys.map((k) => [k.label, k.weight]),
    [
      ["key-1", 3],
      ["key-2", 1],
    ],
  );
  const cooling = providers[2]!.svc_keys.filter((k) => k.state === "cooling");
  assert.is(cooling.length, 1);
  assert.ok(Date.parse(cooling[0]!.cooling_until ?? "") > Date.now() + 60_000);
  assert.not.ok(res.text.includes(KEY_A) || res.text.includes(REVOKED));
  assert.is((await call(gw.url, "GET", "/api/v1/providers", {})).status, 401, "a key is needed");
});

test("instances share a cooldown: a 429 seen by one spares the other", async (ctx) => {
  const { gw, upstream } = ctx;
  let second: GatewayProcess | undefined;
  try {
    second = await startGatewayProcess({
      databaseUrl: gw.databaseUrl,
      key: gw.key,
      env: { GATEWAY_CONFIG: ctx.configFile },
    });
    const session = await sessionServedBy(ctx, "key-1");
    const before = await chat(second.url, gw.key, "pool/chat", "from the second instance", session);
    assert.is(
      before.headers.get("x-gateway-provider-key"),
      "pooled/key-1",
      "the second instance chooses as the first does",
    );
    upstream.reset();
    upstream.rule({ key: KEY_A, status: 429, retryAfter: 60, times: 1 });
    assert.is((await chat(gw.url, gw.key, "pool/chat", "hit the limit", session)).status, 200);
    // The second instance hears of the cooldown and no longer tries key-1 for the session.
    const other = second;
    await eventually(
      () => chat(other.url, gw.key, "pool/chat", "after the limit", session),
      "the second instance rests key-1 too",
      {
        until: (res) => res.headers.get("x-gateway-provider-key") === "pooled/key-2",
      },
    );
    const triesOfA = keysSeen(upstream).filter((key) => key === KEY_A).length;
    for (let i = 0; i < 5; i++)
      assert.is(
        (await chat(second.url, gw.key, "pool/chat", `more ${i}`, session)).headers.get("x-gateway-provider-key"),
        "pooled/key-2",
      );
    assert.is(keysSeen(upstream).filter((key) => key === KEY_A).length, triesOfA);
  } finally {
    await second?.stop();
    // key-1 rests on this instance too: its rest ends here, so that the tests after this one find it usable.
    ctx.clockAhead += 61_000;
  }
});

test.run();
