import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { heldCall } from "../../support/held-call.js";
import { call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * `x-gateway-overhead-ms`: every REST answer says what the gateway added, and the
 * provider's time is attributed to the provider (`x-gateway-upstream-ms`), not to the gateway.
 */
const test = suite<{ env: InferenceGateway }>("x-gateway-overhead-ms");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());

/** How long the test holds the provider's answer: long enough to tell apart from the gateway's own work. */
const HOLD_MS = 200;

function number(headers: Headers, name: string): number {
  const value = headers.get(name);
  assert.ok(value !== null && /^\d+(\.\d+)?$/.test(value), `${name}: ${value}`);
  return Number(value);
}

/**
 * Intervals that lie one inside another on a machine of any speed, compared with one another and
 * never with a budget: the time the test held the provider is within the gateway's upstream time,
 * and the gateway's whole time (overhead and upstream) within the client's wait; so the overhead
 * leaves out the time the provider was held.
 */
test("a chat completion: the provider's wait is upstream time, the rest is overhead", async ({ env }) => {
  const started = performance.now();
  const { answer: res, heldMs } = await heldCall(
    env.upstream,
    () =>
      call(env.gw.url, "POST", "/api/v1/chat/completions", {
        key: env.gw.key,
        body: { model: "mock/chat", messages: [{ role: "user", content: "hi" }] },
      }),
    { forMs: HOLD_MS },
  );
  const waited = performance.now() - started;
  assert.is(res.status, 200, res.text);
  const upstream = number(res.headers, "x-gateway-upstream-ms");
  const overhead = number(res.headers, "x-gateway-overhead-ms");
  assert.ok(upstream >= heldMs, `upstream ${upstream} ms covers the ${heldMs} ms the provider was held`);
  assert.ok(
    overhead + upstream <= waited,
    `overhead ${overhead} + upstream ${upstream} ms within the ${waited} ms the client waited`,
  );
});

test("a streamed chat completion and an error carry it too", async ({ env }) => {
  const streamed = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", stream: true, messages: [{ role: "user", content: "hi" }] },
  });
  assert.is(streamed.status, 200);
  number(streamed.headers, "x-gateway-overhead-ms");
  number(streamed.headers, "x-gateway-upstream-ms");
  const refused = await call(env.gw.url, "GET", "/api/v1/key");
  assert.is(refused.status, 401);
  number(refused.headers, "x-gateway-overhead-ms");
  assert.is(refused.headers.get("x-gateway-upstream-ms"), null, "no provider was called");
});

test.run();
