import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { DecisionQuestionType, DecisionsService } from "../../../gen/gateway/alpha/decisions_pb.js";
import { assertClose, assertError, CHOICE, decide, logprobsRule, NOUL, SCORE } from "../../support/decisions.js";
import { bearer, createGrpcClient } from "../../support/grpc-client.js";
import { at, call } from "../../support/http.js";
import { PRICES, startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { allLedgerRows, ledgerRowsOf } from "../../support/ledger-rows.js";

/**
 * POST /api/alpha/decisions against the mock upstream serving known logprobs: the probabilities,
 * the prompt the model gets, usage and the ledger, fallback, the answers without logprobs, auth.
 * mock/chat is served by mockai (chat-a, cheapest, tried first) and backup (chat-b); its Anthropic
 * endpoint returns no logprobs and is never tried.
 */
const test = suite<{ env: InferenceGateway }>("decisions");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

test("noul: P(true) / (P(true) + P(false)) from the first token's top logprobs", async ({ env }) => {
  env.upstream.rule(logprobsRule({ true: 0.6, false: 0.2, maybe: 0.1 }));
  const res = await decide(env, { questions: { refund: NOUL } });
  assert.is(res.status, 200, res.text);
  assert.equal(Object.keys(res.body as object).sort(), ["answers", "id", "model", "provider", "usage"]);
  const answer = at(res.body, "answers", "refund") as Record<string, unknown>;
  assert.equal(Object.keys(answer).sort(), ["noul", "type"]);
  assert.is(answer.type, "noul");
  assertClose(answer.noul, 0.75, "noul");
  assert.is(at(res.body, "model"), "mock/chat");
  assert.is(at(res.body, "provider"), "MockAI");
  assert.match(String(at(res.body, "id")), /^gen-\d+-[A-Za-z0-9]{20}$/);
});

test("noul: tokens that differ from a label only in case and spaces count for it", async ({ env }) => {
  env.upstream.rule(logprobsRule({ True: 0.3, " true": 0.1, false: 0.2, " FALSE": 0.2, "true.": 0.15 }));
  const res = await decide(env, { questions: { refund: NOUL } });
  assert.is(res.status, 200, res.text);
  assertClose(at(res.body, "answers", "refund", "noul"), 0.5, "noul");
});

test("choice: a normalized distribution over the option names, the arg-max and its confidence", async ({ env }) => {
  env.upstream.rule(logprobsRule({ A: 0.5, B: 0.3, C: 0.1, D: 0.05 }));
  const res = await decide(env, { questions: { team: CHOICE } });
  assert.is(res.status, 200, res.text);
  const answer = at(res.body, "answers", "team") as Record<string, unknown>;
  assert.equal(Object.keys(answer).sort(), ["choice", "confidence", "probabilities", "type"]);
  assert.is(answer.type, "choice");
  assert.is(answer.choice, "billing");
  assertClose(answer.confidence, 5 / 9, "confidence");
  const probabilities = answer.probabilities as Record<string, number>;
  assert.equal(Object.keys(probabilities), ["billing", "support", "sales"]);
  assertClose(probabilities.billing, 5 / 9, "billing");
  assertClose(probabilities.support, 3 / 9, "support");
  assertClose(probabilities.sales, 1 / 9, "sales");
});

test("choice: an option missing from the top logprobs gets 0; lowercase letters count", async ({ env }) => {
  env.upstream.rule(logprobsRule({ a: 0.2, " C": 0.6, Hello: 0.1 }));
  const res = await decide(env, { questions: { team: CHOICE } });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "answers", "team", "choice"), "sales");
  assertClose(at(res.body, "answers", "team", "confidence"), 0.75, "confidence");
  assertClose(at(res.body, "answers", "team", "probabilities", "billing"), 0.25, "billing");
  assert.is(at(res.body, "answers", "team", "probabilities", "support"), 0);
});

test("score: distribution over scale indices, expected score, confidence and legend", async ({ env }) => {
  env.upstream.rule(logprobsRule({ "0": 0.1, "1": 0.15, "2": 0.25, x: 0.3 }));
  const res = await decide(env, { questions: { severity: SCORE } });
  assert.is(res.status, 200, res.text);
  const answer = at(res.body, "answers", "severity") as Record<string, unknown>;
  assert.equal(Object.keys(answer).sort(), ["confidence", "legend", "probabilities", "score", "type"]);
  assert.is(answer.type, "score");
  // Normalized over the labels: 0.2, 0.3, 0.5.
  assertClose(answer.score, 0 * 0.2 + 1 * 0.3 + 2 * 0.5, "score");
  assertClose(answer.confidence, 0.5, "confidence");
  const probabilities = answer.probabilities as Record<string, number>;
  assert.equal(Object.keys(probabilities), ["0", "1", "2"]);
  assertClose(probabilities["0"], 0.2, "p0");
  assertClose(probabilities["1"], 0.3, "p1");
  assertClose(probabilities["2"], 0.5, "p2");
  assert.equal(answer.legend, { "0": "Cosmetic", "1": "Workaround exists", "2": "Blocking" });
});

test(
  "the prompt: system + user with the state, instructions and labelled criteria; " + "one token with top logprobs",
  async ({ env }) => {
    env.upstream.rule(logprobsRule({ A: 0.9, B: 0.1 }));
    const state = { ticket: "Refund please", amount: 42 };
    const res = await decide(env, { state, questions: { team: CHOICE } });
    assert.is(res.status, 200, res.text);
    assert.is(env.upstream.requests.length, 1);
    const sent = env.upstream.requests[0]!;
    assert.is(sent.path, "/openai/v1/chat/completions");
    assert.is(sent.model, "chat-a");
    const body = sent.body as Record<string, unknown>;
    assert.is(body.max_tokens, 1);
    assert.is(body.logprobs, true);
    assert.is(body.top_logprobs, 20);
    const messages = body.messages as Array<{ role: string; content: string }>;
    assert.equal(
      messages.map((m) => m.role),
      ["system", "user"],
    );
    assert.match(messages[0]!.content, /label only/);
    const user = messages[1]!.content;
    assert.ok(user.includes(JSON.stringify(state)), user);
    assert.ok(user.includes("Which team should handle this?"), user);
    for (const line of [
      "A: billing: Payments and refunds",
      "B: support: Technical problems",
      "C: sales: New purchases",
    ])
      assert.ok(user.includes(line), line);
    assert.match(user, /Reply with one label: A, B or C\./);
  },
);

test("the score and noul prompts name their labels", async ({ env }) => {
  env.upstream.rule(logprobsRule({ true: 0.5, false: 0.5, "0": 0.2, "1": 0.2, "2": 0.2 }));
  const res = await decide(env, { questions: { severity: SCORE, refund: NOUL } });
  assert.is(res.status, 200, res.text);
  const prompts = env.upstream.requests.map(
    (r) => (r.body as { messages: Array<{ content: string }> }).messages[1]!.content,
  );
  const score = prompts.find((p) => p.includes("How severe"))!;
  assert.match(score, /ordered scale from 0 \(lowest\) to 2 \(highest\)/);
  assert.match(score, /0: Cosmetic\n1: Workaround exists\n2: Blocking/);
  assert.match(score, /Reply with one label: 0, 1 or 2\./);
  const noul = prompts.find((p) => p.includes("refund?"))!;
  assert.match(noul, /true: asks for money back\nfalse: does not/);
  assert.match(noul, /Reply with one label: true or false\./);
});

test("several questions: one upstream call each, one ledger row with the summed usage and its cost", async ({
  env,
}) => {
  // One rule for every call: each question reads its own labels among the same alternatives.
  env.upstream.rule(
    logprobsRule(
      { true: 0.3, false: 0.1, A: 0.1, B: 0.3, C: 0.1, "0": 0.02, "1": 0.02, "2": 0.06 },
      { usage: { prompt_tokens: 100, completion_tokens: 1 } },
    ),
  );
  const res = await decide(env, { questions: { refund: NOUL, team: CHOICE, severity: SCORE } });
  assert.is(res.status, 200, res.text);
  assert.is(env.upstream.requests.length, 3);
  assertClose(at(res.body, "answers", "refund", "noul"), 0.75, "noul");
  assert.is(at(res.body, "answers", "team", "choice"), "support");
  assertClose(at(res.body, "answers", "team", "confidence"), 0.6, "choice confidence");
  assertClose(at(res.body, "answers", "severity", "score"), 0.2 + 2 * 0.6, "score");

  // chat-a: 300 prompt tokens × $0.000001 + 3 completion tokens × $0.000002.
  assert.equal(PRICES["chat-a"], { prompt: "0.000001", completion: "0.000002" });
  assert.equal(at(res.body, "usage"), { cost: 0.000306, input_tokens: 300, output_tokens: 3 });
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.is(rows.length, 1);
  const row = rows[0]!;
  assert.is(row.status, "success");
  assert.is(row.http_status, 200);
  assert.is(row.model_id, "mock/chat");
  assert.is(row.provider_slug, "mockai");
  assert.is(row.streamed, false);
  assert.is(row.prompt_tokens, 300);
  assert.is(row.completion_tokens, 3);
  assert.is(Number(row.cost_usd), 0.000306);
  // The key's usage includes it.
  const key = await call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key });
  assert.ok(Number(at(key.body, "data", "usage")) >= 0.000306, key.text);
});

test("a failing endpoint falls back for the whole decision: answers, model and cost all from the next one", async ({
  env,
}) => {
  env.upstream.rule({ model: "chat-a", status: 503 });
  env.upstream.rule(
    logprobsRule(
      { true: 0.9, false: 0.1, A: 0.5, B: 0.5 },
      { model: "chat-b", usage: { prompt_tokens: 10, completion_tokens: 1 } },
    ),
  );
  const res = await decide(env, { questions: { refund: NOUL, team: CHOICE } });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "provider"), "Backup");
  assertClose(at(res.body, "answers", "refund", "noul"), 0.9, "noul");
  // Ties go to the first option.
  assert.is(at(res.body, "answers", "team", "choice"), "billing");
  // chat-b: 20 prompt tokens × $0.000003 + 2 × $0.000004.
  assertClose(at(res.body, "usage", "cost"), 0.000068, "cost");
  const rows = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
  assert.equal(
    rows.map((r) => [r.status, r.http_status, r.provider_slug]),
    [
      ["error", 503, "mockai"],
      ["success", 200, "backup"],
    ],
  );
  assert.is(Number(rows[0]!.cost_usd), 0);
  assert.is(Number(rows[1]!.cost_usd), 0.000068);
});

test("a model without any endpoint that returns logprobs: 404 naming the reason, nothing sent", async ({ env }) => {
  const res = await decide(env, { model: "mock/claude", questions: { refund: NOUL } });
  assertError(res, 404, /logprobs/);
  assert.is(env.upstream.requests.length, 0);
  assert.is((await allLedgerRows(env.gw)).filter((r) => r.model_id === "mock/claude").length, 0);
});

test("answers without logprobs: every endpoint is tried, then 502 naming the reason; nothing is billed", async ({
  env,
}) => {
  const noLogprobs = JSON.stringify({
    id: "chatcmpl-x",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content: "true" }, logprobs: null, finish_reason: "length" }],
    usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
  });
  env.upstream.rule({ rawBody: noLogprobs });
  const before = (await allLedgerRows(env.gw)).length;
  const res = await decide(env, { questions: { refund: NOUL } });
  assertError(res, 502, /no logprobs/);
  assert.match(String(at(res.body, "error", "message")), /refund/);
  assert.equal(
    env.upstream.requests.map((r) => r.model),
    ["chat-a", "chat-b"],
  );
  const rows = (await allLedgerRows(env.gw)).slice(before);
  assert.equal(
    rows.map((r) => [r.status, r.http_status, Number(r.cost_usd)]),
    [
      ["error", 502, 0],
      ["error", 502, 0],
    ],
  );
});

test("answers whose top logprobs hold none of the labels: 502 naming the labels", async ({ env }) => {
  env.upstream.rule(logprobsRule({ Hello: 0.7, I: 0.2 }));
  const res = await decide(env, { questions: { team: CHOICE } });
  assertError(res, 502, /none of the labels \(A, B, C\)/);
});

test("over gRPC the answer is the oneof member of its type", async ({ env }) => {
  env.upstream.rule(logprobsRule({ true: 0.6, false: 0.2, "0": 0.5, "1": 0.5 }));
  const client = createGrpcClient(DecisionsService, env.gw.grpcUrl);
  try {
    const reply = await client.unary(
      DecisionsService.method.createDecision,
      {
        model: "mock/chat",
        state: { ticket: "x" },
        questions: {
          refund: {
            type: DecisionQuestionType.NOUL,
            instructions: "Refund?",
            criteria: {
              kind: {
                case: "structValue",
                value: {
                  fields: {
                    true: { kind: { case: "stringValue", value: "yes" } },
                    false: { kind: { case: "stringValue", value: "no" } },
                  },
                },
              },
            },
          },
        },
      },
      bearer(env.gw.key),
    );
    const answer = reply.answers.refund!.answer;
    assert.is(answer.case, "noul");
    assertClose(answer.case === "noul" ? answer.value.noul : NaN, 0.75, "noul");
    assert.is(reply.provider, "MockAI");
  } finally {
    client.close();
  }
});

test("no key or an unknown key: 401", async ({ env }) => {
  assertError(await decide(env, { questions: { refund: NOUL } }, null), 401);
  assertError(await decide(env, { questions: { refund: NOUL } }, "sk-gw-not-a-key"), 401);
  assert.is(env.upstream.requests.length, 0);
});

test("a key whose credit limit cannot cover the worst case: 402, nothing sent", async ({ env }) => {
  const created = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.gw.key,
    body: { name: "tiny", limit: 0.0000001 },
  });
  assert.is(created.status, 201, created.text);
  assertError(await decide(env, { questions: { refund: NOUL } }, String(at(created.body, "key"))), 402);
  assert.is(env.upstream.requests.length, 0);
});
test("a guardrail that forbids the model: 403 naming the rule, nothing sent", async ({ env }) => {
  const created = await call(env.gw.url, "POST", "/api/v1/keys", { key: env.gw.key, body: { name: "guarded" } });
  assert.is(created.status, 201, created.text);
  const guardrail = await call(env.gw.url, "POST", "/api/v1/guardrails", {
    key: env.gw.key,
    body: { name: "claude only", allowed_models: ["mock/claude"] },
  });
  assert.is(guardrail.status, 201, guardrail.text);
  const assigned = await call(
    env.gw.url,
    "POST",
    `/api/v1/guardrails/${String(at(guardrail.body, "data", "id"))}/assignments/keys`,
    {
      key: env.gw.key,
      body: { key_hashes: [String(at(created.body, "data", "hash"))] },
    },
  );
  assert.is(assigned.status, 200, assigned.text);
  assertError(
    await decide(env, { questions: { refund: NOUL } }, String(at(created.body, "key"))),
    403,
    /allowed_models/,
  );
  assert.is(env.upstream.requests.length, 0);
});

test.run();
