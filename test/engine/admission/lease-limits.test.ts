import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../../support/eventually.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { abandonOnceUpstream } from "../../support/abandoned-call.js";
import { CALL_USD, EPSILON, ONE_CALL, centralSpend, chat, newKey } from "./support.js";

/**
 * docs/architecture.md, admission from leases, with two gateway instances on one database (this
 * process and a child): no budget is exceeded whatever the concurrency (rate limits: the same
 * over two instances in test/engine/inference/limits.test.ts), a budget spent on one
 * instance is refused on the other once its own slice is gone, and failed or cancelled calls
 * give back what they reserved.
 */
const TOP_UP_MS = 50;
const settings = {
  GATEWAY_LEASE_TOPUP_MS: String(TOP_UP_MS),
  // Slices stay with an idle instance for the whole suite: the cross-instance test needs one held.
  GATEWAY_LEASE_IDLE_MS: "600000",
};

const test = suite<{ env: InferenceGateway; second: GatewayProcess }>("admission leases: limits across instances");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway(settings);
  ctx.second = await startGatewayProcess({
    databaseUrl: ctx.env.gw.databaseUrl,
    key: ctx.env.gw.key,
    env: { ...settings, GATEWAY_CONFIG: ctx.env.configFile, MOCK_UPSTREAM_KEY: ctx.env.upstream.apiKey },
  });
});
test.after(async (ctx) => {
  await ctx.second?.stop();
  await ctx.env.stop();
});
test.before.each(({ env }) => {
  env.upstream.reset();
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 }, delayMs: 10 });
});

test(
  "50 concurrent calls over two instances against a budget that allows 10: " + "at most 10 succeed, the rest 402",
  async ({ env, second }) => {
    const { key, hash } = await newKey(env.gw.url, env.gw.key, { limit: 10 * CALL_USD });
    const bases = [env.gw.url, second.url];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(bases[i % 2]!, key)));
    const ok = results.filter((r) => r.status === 200).length;
    assert.ok(ok <= 10, `${ok} calls succeeded`);
    assert.ok(ok >= 5, `${ok} calls succeeded: slices held by one instance leave the other at least half`);
    for (const refused of results.filter((r) => r.status !== 200)) assert.is(refused.status, 402, refused.text);
    const central = await eventually(
      () => centralSpend(env.gw.gateway.sequelize, hash),
      "every answered call settles",
      {
        until: (c) => c.ledgerRows === ok,
      },
    );
    assert.ok(Math.abs(central.spent - ok * CALL_USD) < EPSILON, `spent ${central.spent}`);
    assert.ok(
      central.spent + central.leased <= 10 * CALL_USD + EPSILON,
      `spent ${central.spent} + leased ${central.leased}`,
    );
  },
);

test("a budget spent on instance A: instance B admits only what its own slice still holds, then refuses", async ({
  env,
  second,
}) => {
  const { key, hash } = await newKey(env.gw.url, env.gw.key, { limit: 10 * CALL_USD });
  assert.is((await chat(second.url, key)).status, 200, "B holds a slice now");
  await new Promise((resolve) => setTimeout(resolve, 4 * TOP_UP_MS));
  let onA = 0;
  for (let refused = false; !refused; ) {
    const res = await chat(env.gw.url, key);
    if (res.status === 200) onA++;
    else {
      assert.is(res.status, 402, res.text);
      refused = true;
    }
  }
  const held = await centralSpend(env.gw.gateway.sequelize, hash);
  await new Promise((resolve) => setTimeout(resolve, TOP_UP_MS));
  let onB = 0;
  for (let refused = false; !refused; ) {
    const res = await chat(second.url, key);
    if (res.status === 200) onB++;
    else {
      assert.is(res.status, 402, res.text);
      assert.match(String(at(res.body, "error", "message")), /credit limit/);
      refused = true;
    }
  }
  assert.ok(
    onB * CALL_USD <= held.leased + EPSILON,
    `B admitted ${onB} calls, more than the ${held.leased} USD still leased`,
  );
  assert.ok(1 + onA + onB <= 10, `${1 + onA + onB} calls admitted in all`);
  assert.is((await chat(env.gw.url, key)).status, 402, "A still refuses");
  const central = await eventually(() => centralSpend(env.gw.gateway.sequelize, hash), "every answered call settles", {
    until: (c) => c.ledgerRows === 1 + onA + onB,
  });
  assert.ok(central.spent + central.leased <= 10 * CALL_USD + EPSILON);
});

test("failed and cancelled calls give back what they reserved", async ({ env }) => {
  const { key } = await newKey(env.gw.url, env.gw.key, { limit: CALL_USD });
  env.upstream.reset();
  env.upstream.rule({ status: 500, times: 1 });
  assert.is((await chat(env.gw.url, key)).status, 502);

  env.upstream.rule({ hang: true, times: 1 });
  await abandonOnceUpstream(env.upstream, env.gw.url, key, ONE_CALL);
  await env.upstream.waitForAbort();

  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 } });
  const last = await eventually(() => chat(env.gw.url, key), "the whole budget is free again", {
    until: (r) => r.status === 200,
  });
  assert.is(last.status, 200);
  assert.is((await chat(env.gw.url, key)).status, 402, "and then it is spent");
});

test.run();
