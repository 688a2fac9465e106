import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import OpenAI from "openai";
import { at, call } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";

/**
 * `/v1/...` answers exactly as `/api/v1/...` (facade/route-table.ts, BASE_ALIASES): the official
 * `openai` SDK given `http://host/v1` as its base URL works unchanged, with the same routes and
 * the same authentication, and records name the canonical route.
 */
const test = suite<{ env: InferenceGateway; client: OpenAI }>("facade: /v1 is an alias of /api/v1");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
  ctx.client = new OpenAI({ apiKey: ctx.env.gw.key, baseURL: `${ctx.env.gw.url}/v1`, maxRetries: 0 });
});
test.after(async (ctx) => ctx.env.stop());

test("the openai SDK with base URL /v1: a chat completion and the models list", async ({ env, client }) => {
  const seen = env.upstream.requests.length;
  const completion = await client.chat.completions.create({
    model: "mock/chat",
    messages: [{ role: "user", content: "Hi there" }],
  });
  assert.is(completion.model, "mock/chat");
  assert.is(completion.choices[0]?.message.content, "Hello from chat-a");
  assert.is(env.upstream.requests.length, seen + 1, "the call reached the provider");
  const models = (await client.models.list()).data.map((model) => model.id);
  assert.ok(models.includes("mock/chat"), String(models));
});

test("the same answers as /api/v1, and the same authentication: 401 without a key", async ({ env }) => {
  const [alias, base] = await Promise.all([
    call(env.gw.url, "GET", "/v1/key", { key: env.gw.key }),
    call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key }),
  ]);
  assert.is(alias.status, 200, alias.text);
  assert.equal(alias.body, base.body);
  const refused = await call(env.gw.url, "GET", "/v1/models/user");
  assert.is(refused.status, 401, refused.text);
  assert.equal(refused.body, (await call(env.gw.url, "GET", "/api/v1/models/user")).body);
  const chat = await call(env.gw.url, "POST", "/v1/chat/completions", {
    body: { model: "mock/chat", messages: [{ role: "user", content: "Hi" }] },
  });
  assert.is(chat.status, 401, chat.text);
  assert.is(
    at(chat.body, "error", "type"),
    "authentication_error",
    "the OpenAI route's error dialect holds under the alias",
  );
});

test("a verb the route does not take: 405 with Allow, as under /api/v1", async ({ env }) => {
  const res = await call(env.gw.url, "GET", "/v1/chat/completions", { key: env.gw.key });
  assert.is(res.status, 405, res.text);
  assert.is(res.headers.get("allow"), "POST");
});

test.run();
