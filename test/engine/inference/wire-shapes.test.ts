import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Answers match the providers' own wire shapes (docs/response-envelopes.md): a plain text answer carries no empty
 * arrays where OpenAI or Anthropic omit the field. In JavaScript `[]` is truthy, so an agent loop
 * that tests `if (message.tool_calls)` would run zero tools and loop forever.
 */
const test = suite<{ inf: InferenceGateway }>("inference: provider wire shapes");

test.before(async (ctx) => {
  ctx.inf = await startInferenceGateway();
});
test.after(async (ctx) => {
  await ctx.inf.stop();
});

/** Paths of every empty array in a JSON value. */
function emptyArrays(value: unknown, path = "$"): string[] {
  if (Array.isArray(value))
    return value.length === 0 ? [path] : value.flatMap((item, i) => emptyArrays(item, `${path}[${i}]`));
  if (value !== null && typeof value === "object")
    return Object.entries(value).flatMap(([key, item]) => emptyArrays(item, `${path}.${key}`));
  return [];
}

for (const model of ["mock/chat", "mock/claude"]) {
  test(`chat completions (${model}): a plain text answer has no tool_calls, images or reasoning_details`, async ({
    inf,
  }) => {
    const res = await call(inf.gw.url, "POST", "/api/v1/chat/completions", {
      key: inf.gw.key,
      body: { model, messages: [{ role: "user", content: "hi" }] },
    });
    assert.is(res.status, 200, res.text);
    const message = (res.body as { choices: Array<{ message: Record<string, unknown> }> }).choices[0]!.message;
    for (const field of ["tool_calls", "images", "reasoning_details"])
      assert.not.ok(field in message, `${field} in ${JSON.stringify(message)}`);
    assert.equal(
      emptyArrays(res.body).filter((p) => !p.endsWith(".annotations")),
      [],
    );
  });
}

test("responses: a plain text answer has no empty arrays but the ones OpenAI sends", async ({ inf }) => {
  const res = await call(inf.gw.url, "POST", "/api/v1/responses", {
    key: inf.gw.key,
    body: { model: "mock/chat", input: "hi" },
  });
  assert.is(res.status, 200, res.text);
  // OpenAI's Responses object always has `output`, `tools` and each text part's `annotations`.
  assert.equal(
    emptyArrays(res.body).filter((p) => !/(\.tools|\.annotations)$/.test(p)),
    [],
    res.text,
  );
});

test("messages: a plain text answer has no empty arrays", async ({ inf }) => {
  const res = await call(inf.gw.url, "POST", "/api/v1/messages", {
    key: inf.gw.key,
    body: { model: "mock/claude", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
  });
  assert.is(res.status, 200, res.text);
  assert.equal(emptyArrays(res.body), [], res.text);
});

test.run();
