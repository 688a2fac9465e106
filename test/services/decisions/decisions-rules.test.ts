import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { assertError, CHOICE, decide, logprobsRule, NOUL, SCORE } from "../../support/decisions.js";
import { at, call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { allLedgerRows } from "../../support/ledger-rows.js";
import type { MockRule } from "../../upstream/mock-upstream.js";

/**
 * The rules of POST /api/alpha/decisions: each criteria shape refused with a 400 naming
 * `questions.<name>.criteria`, the other fields, the size limits (413), and upstream failures
 * mapped as live chat maps them. Refused requests never reach the provider.
 */
const test = suite<{ env: InferenceGateway }>("decisions rules");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const BAD_CRITERIA: Record<string, unknown[]> = {
  noul: [
    null,
    "yes",
    ["yes", "no"],
    {},
    { true: "yes" },
    { true: "yes", false: "no", maybe: "?" },
    { true: 1, false: "no" },
    { yes: "a", no: "b" },
    { true: "yes", false: null },
  ],
  choice: [
    null,
    "billing",
    ["billing", "support"],
    {},
    { billing: "only one" },
    { billing: "x", support: 2 },
    { "": "x", support: "y" },
    Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`o${i}`, "d"])),
  ],
  score: [
    null,
    "high",
    { low: "a", high: "b" },
    [],
    ["only one"],
    ["low", 2],
    Array.from({ length: 11 }, (_, i) => `level ${i}`),
  ],
};

for (const [type, values] of Object.entries(BAD_CRITERIA)) {
  test(`${type}: every wrong criteria shape is a 400 naming questions.<name>.criteria`, async ({ env }) => {
    for (const criteria of values) {
      const res = await decide(env, { questions: { q1: { type, instructions: "Decide", criteria } } });
      assertError(res, 400, /questions\.q1\.criteria/);
    }
    assert.is(env.upstream.requests.length, 0);
  });
}

test("the largest accepted shapes: 20 choice options, 10 score levels, empty descriptions", async ({ env }) => {
  const options = Object.fromEntries(
    Array.from({ length: 20 }, (_, i) => [`option-${i}`, i === 0 ? "" : `description ${i}`]),
  );
  env.upstream.rule(logprobsRule({ T: 0.5, A: 0.25, "9": 0.25, "0": 0.75 }));
  const res = await decide(env, {
    questions: {
      many: { type: "choice", instructions: "", criteria: options },
      fine: { type: "score", instructions: "Rate", criteria: Array.from({ length: 10 }, (_, i) => `level ${i}`) },
    },
  });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "answers", "many", "choice"), "option-19");
  assert.is(Object.keys(at(res.body, "answers", "many", "probabilities") as object).length, 20);
  assert.is(at(res.body, "answers", "fine", "score"), 9 * 0.25);
  const prompt = env.upstream.requests
    .map((r) => (r.body as { messages: Array<{ content: string }> }).messages[1]!.content)
    .find((p) => p.includes("option-0"))!;
  assert.match(prompt, /\(no further instructions\)/);
  assert.match(prompt, /\nA: option-0\n/);
  assert.match(prompt, /\nT: option-19: description 19\n/);
});

test("type is required and must be noul, choice or score", async ({ env }) => {
  assertError(
    await decide(env, { questions: { q1: { instructions: "x", criteria: { true: "a", false: "b" } } } }),
    400,
    /questions\.q1\.type/,
  );
  assertError(
    await decide(env, { questions: { q1: { type: "boolean", criteria: { true: "a", false: "b" } } } }),
    400,
    /type/,
  );
  assertError(await decide(env, { questions: { q1: { type: "noul" } } }), 400, /questions\.q1\.criteria is required/);
  assert.is(env.upstream.requests.length, 0);
});

test("model, state and questions are required; at most 32 questions; names of 1 to 128 characters", async ({ env }) => {
  assertError(await decide(env, { model: "", questions: { q: NOUL } }), 400, /model/);
  assertError(
    await call(env.gw.url, "POST", "/api/alpha/decisions", {
      key: env.gw.key,
      body: { model: "mock/chat", questions: { q: NOUL } },
    }),
    400,
    /state/,
  );
  assertError(await decide(env, { state: "text", questions: { q: NOUL } }), 400, /state/);
  assertError(await decide(env, {}), 400, /questions/);
  assertError(await decide(env, { questions: {} }), 400, /questions/);
  assertError(await decide(env, { questions: ["a"] }), 400, /questions/);
  const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`q${i}`, NOUL]));
  assertError(await decide(env, { questions: many }), 400, /at most 32/);
  assertError(await decide(env, { questions: { "": NOUL } }), 400, /question names/);
  assertError(await decide(env, { questions: { ["n".repeat(129)]: NOUL } }), 400, /question names/);
  assert.is(env.upstream.requests.length, 0);

  env.upstream.rule(logprobsRule({ true: 0.5, false: 0.5 }));
  const full = await decide(env, {
    questions: Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`${"n".repeat(120)}${i}`, NOUL])),
  });
  assert.is(full.status, 200, full.text);
  assert.is(Object.keys(at(full.body, "answers") as object).length, 32);
  assert.is(env.upstream.requests.length, 32);
});

test("an unknown model or one that does not produce text: 400", async ({ env }) => {
  assertError(await decide(env, { model: "mock/nope", questions: { q: NOUL } }), 400, /mock\/nope/);
  assertError(await decide(env, { model: "mock/embed", questions: { q: NOUL } }), 400, /mock\/embed/);
  assert.is(env.upstream.requests.length, 0);
});

test("sizes: state over 256 KiB, a question's text over 32 KiB, a body over 1 MiB are 413", async ({ env }) => {
  const big = (bytes: number) => "x".repeat(bytes);
  const tooLargeState = await decide(env, { state: { text: big(256 * 1024) }, questions: { q: NOUL } });
  assertError(tooLargeState, 413, /state/);
  assert.is(at(tooLargeState.body, "error", "metadata", "reason"), "payload_too_large");
  assertError(await decide(env, { questions: { q: { ...NOUL, instructions: big(32 * 1024) } } }), 413, /questions\.q/);
  assertError(
    await decide(env, { questions: { q: { ...SCORE, criteria: [big(20_000), big(20_000)] } } }),
    413,
    /questions\.q/,
  );
  assertError(await decide(env, { state: { text: big(1024 * 1024) }, questions: { q: NOUL } }), 413);
  assert.is(env.upstream.requests.length, 0);

  env.upstream.rule(logprobsRule({ A: 1 }));
  const fits = await decide(env, {
    state: { text: big(200 * 1024) },
    questions: { q: { ...CHOICE, instructions: big(30 * 1024) } },
  });
  assert.is(fits.status, 200, fits.text);
});

interface Mapping {
  upstream: MockRule;
  status: number;
}

/**
 * As server/engine/inference/upstream-errors.ts maps them; the rule holds for every endpoint, so
 * fallbacks end in the same failure.
 */
const MAPPING: Record<string, Mapping> = {
  "400": { upstream: { status: 400 }, status: 400 },
  "413": { upstream: { status: 413 }, status: 413 },
  "401 (our credentials)": { upstream: { status: 401 }, status: 502 },
  "402": { upstream: { status: 402 }, status: 502 },
  "429": { upstream: { status: 429, retryAfter: 7 }, status: 429 },
  "500": { upstream: { status: 500 }, status: 502 },
  "503": { upstream: { status: 503, retryAfter: 3 }, status: 503 },
  "529": { upstream: { status: 529 }, status: 529 },
  "malformed JSON": { upstream: { rawBody: '{"choices": [' }, status: 502 },
};

for (const [name, row] of Object.entries(MAPPING)) {
  test(`upstream ${name} → ${row.status}, recorded unbilled in the ledger`, async ({ env }) => {
    env.upstream.rule(row.upstream);
    const before = (await allLedgerRows(env.gw)).length;
    const res = await decide(env, { questions: { q: NOUL } });
    assertError(res, row.status);
    assert.ok(!res.text.includes(env.upstream.apiKey), "the provider key leaked");
    if (row.upstream.retryAfter !== undefined)
      assert.is(res.headers.get("retry-after"), String(row.upstream.retryAfter));
    const rows = (await allLedgerRows(env.gw)).slice(before);
    assert.ok(rows.length >= 1);
    assert.is(rows.at(-1)!.http_status, row.status);
    for (const r of rows) {
      assert.is(r.status, "error");
      assert.is(Number(r.cost_usd), 0);
    }
    // A request the provider refused as bad is not retried elsewhere.
    const fallbacks = row.status === 400 || row.status === 413 ? 1 : 2;
    assert.is(env.upstream.requests.length, fallbacks);
  });
}

test("an upstream that does not answer in time → 524", async ({ env }) => {
  env.upstream.rule({ hang: true });
  const res = await decide(env, { questions: { q: NOUL } });
  assertError(res, 524);
});

test("one failing question fails the decision on that endpoint; the next endpoint answers all of them", async ({
  env,
}) => {
  env.upstream.rule({ model: "chat-a", status: 429, times: 1 });
  env.upstream.rule(logprobsRule({ true: 0.8, false: 0.2, A: 1 }));
  const res = await decide(env, { questions: { one: NOUL, two: NOUL, three: CHOICE } });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "provider"), "Backup");
  assert.is(env.upstream.requests.filter((r) => r.model === "chat-b").length, 3);
});

test.run();
