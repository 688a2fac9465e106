import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import OpenAI, { APIError } from "openai";
import { at, call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * The OpenAI-compatible surface as the `openai` SDK sees it: errors carry OpenAI's `type` (and
 * `param`) beside the API's envelope, `models.retrieve`, embedding models in the lists, and the
 * 404 of a client whose base URL lacks `/api/v1`. Messages errors carry Anthropic's names.
 */
const test = suite<{ env: InferenceGateway; client: OpenAI }>("openai surface");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
  ctx.client = new OpenAI({ apiKey: ctx.env.gw.key, baseURL: `${ctx.env.gw.url}/api/v1`, maxRetries: 0 });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const HELLO: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Hi there" }];

async function apiError(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof APIError) return err;
    throw err;
  }
  throw new Error("the call succeeded");
}

/** A body the SDK's types would refuse, sent as the SDK sends any body. */
function loose(body: Record<string, unknown>): OpenAI.ChatCompletionCreateParamsNonStreaming {
  return body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
}

test("a field rule broken: 400 invalid_request_error with param naming the field; the API's code stays", async ({
  client,
}) => {
  const err = await apiError(client.chat.completions.create({ model: "mock/chat", messages: HELLO, temperature: 5 }));
  assert.instance(err, OpenAI.BadRequestError);
  assert.is(err.type, "invalid_request_error");
  assert.is(err.param, "temperature");
  assert.is(err.code, 400);
  assert.match(err.message, /temperature must be at most 2/);
});

test("a nested field and a wrong JSON type name their path in param", async ({ client }) => {
  const nested = await apiError(
    client.chat.completions.create(loose({ model: "mock/chat", messages: [...HELLO, { content: "no role" }] })),
  );
  assert.is(nested.param, "messages[1].role");
  const wrongType = await apiError(
    client.chat.completions.create(loose({ model: "mock/chat", messages: HELLO, max_tokens: "many" })),
  );
  assert.is(wrongType.type, "invalid_request_error");
  assert.is(wrongType.param, "max_tokens");
});

test("an unknown model: invalid_request_error without param; a wrong key: authentication_error", async ({
  env,
  client,
}) => {
  const unknown = await apiError(client.chat.completions.create({ model: "mock/nope", messages: HELLO }));
  assert.is(unknown.type, "invalid_request_error");
  assert.is(unknown.param, undefined);
  const stranger = new OpenAI({ apiKey: "sk-not-a-key", baseURL: `${env.gw.url}/api/v1`, maxRetries: 0 });
  const denied = await apiError(stranger.embeddings.create({ model: "mock/embed", input: "alpha" }));
  assert.instance(denied, OpenAI.AuthenticationError);
  assert.is(denied.type, "authentication_error");
});

test("the envelope is the API's plus type: raw bodies on an OpenAI route and on another route", async ({ env }) => {
  const embeddings = await call(env.gw.url, "POST", "/api/v1/embeddings", {
    key: env.gw.key,
    body: { model: "mock/chat", input: "alpha" },
  });
  assert.is(embeddings.status, 400);
  assert.equal(Object.keys(at(embeddings.body, "error") as object).sort(), ["code", "message", "type"]);
  assert.is(at(embeddings.body, "error", "type"), "invalid_request_error");
  const key = await call(env.gw.url, "GET", "/api/v1/key");
  assert.is(key.status, 401);
  assert.is(
    at(key.body, "error", "type"),
    undefined,
    "routes outside the OpenAI surface keep the API's envelope alone",
  );
});

test("a provider failure mid-stream: the SSE error event carries the type too", async ({ env, client }) => {
  env.upstream.rule({ model: "chat-a", streamError: { afterChunks: 2, type: "overloaded_error" }, times: 1 });
  const stream = await client.chat.completions.create({ model: "mock/chat", messages: HELLO, stream: true });
  const err = await apiError(
    (async () => {
      for await (const chunk of stream) void chunk;
    })(),
  );
  assert.is(err.type, "service_unavailable_error");
  assert.is(at(err.error, "code"), 529);
});

test("Messages (Anthropic's API): Anthropic's type names, no param", async ({ env }) => {
  const anonymous = await call(env.gw.url, "POST", "/api/v1/messages", {
    body: { model: "mock/claude", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
  });
  assert.is(anonymous.status, 401);
  assert.is(at(anonymous.body, "error", "type"), "authentication_error");
  const unknown = await call(env.gw.url, "POST", "/api/v1/messages", {
    key: env.gw.key,
    body: { model: "mock/nope", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
  });
  assert.is(unknown.status, 400);
  assert.is(at(unknown.body, "error", "type"), "invalid_request_error");
  assert.is(at(unknown.body, "error", "param"), undefined);
});

test(
  "models.retrieve('author/slug'): the list's entry; " +
    "/models/{author}/{slug} answers the same; 404 not_found_error",
  async ({ env, client }) => {
    const listed = (await client.models.list()).data.find((model) => model.id === "mock/chat");
    assert.ok(listed);
    const retrieved = await client.models.retrieve("mock/chat");
    assert.equal(retrieved, listed);
    const path = await call(env.gw.url, "GET", "/api/v1/models/mock/chat");
    assert.is(path.status, 200);
    assert.equal(path.body, listed);
    const missing = await apiError(client.models.retrieve("mock/nope"));
    assert.instance(missing, OpenAI.NotFoundError);
    assert.is(missing.type, "not_found_error");
    assert.match(missing.message, /mock\/nope/);
    assert.is((await call(env.gw.url, "GET", "/api/v1/models/nope")).status, 404, "an id without author is no model");
  },
);

test(
  "embedding models: retrievable, listed by /embeddings/models and with output_modalities; " +
    "the default list stays text (OpenRouter)",
  async ({ env, client }) => {
    assert.is((await client.models.retrieve("mock/embed")).id, "mock/embed");
    const byDefault = (await client.models.list()).data.map((model) => model.id);
    assert.ok(byDefault.includes("mock/chat") && !byDefault.includes("mock/embed"), String(byDefault));
    const asked = (await client.models.list({ query: { output_modalities: "embeddings" } })).data.map(
      (model) => model.id,
    );
    assert.equal(asked, ["mock/embed"]);
    const all = (await client.models.list({ query: { output_modalities: "all" } })).data.map((model) => model.id);
    assert.ok(all.includes("mock/chat") && all.includes("mock/embed"), String(all));
    const list = await call(env.gw.url, "GET", "/api/v1/embeddings/models");
    assert.is(list.status, 200);
    assert.equal(
      (at(list.body, "data") as Array<{ id: string }>).map((model) => model.id),
      ["mock/embed"],
    );
    assert.is(at(list.body, "total_count"), 1);
  },
);

test("a base URL without /api/v1 (or its alias /v1): 404 naming the right base URL and the route meant", async ({
  env,
}) => {
  const base = env.gw.url;
  const sdk = new OpenAI({ apiKey: env.gw.key, baseURL: base, maxRetries: 0 });
  const err = await apiError(sdk.chat.completions.create({ model: "mock/chat", messages: HELLO }));
  assert.instance(err, OpenAI.NotFoundError);
  assert.ok(
    err.message.includes(`the API's base URL is ${base}/api/v1 (POST ${base}/api/v1/chat/completions)`),
    err.message,
  );

  // Under the alias, as under /api/v1, an unknown path is simply unknown.
  const v1 = await call(base, "GET", "/v1/nothing-here", { key: env.gw.key });
  assert.equal(v1.body, { error: { code: 404, message: "No route for GET /v1/nothing-here" } });
  const root = await call(base, "GET", "/");
  assert.is(root.status, 404);
  assert.equal(root.body, {
    error: { code: 404, message: `No route for GET /: the API's base URL is ${base}/api/v1` },
  });
  const wrongVerb = await call(base, "GET", "/chat/completions");
  assert.ok(
    String(at(wrongVerb.body, "error", "message")).endsWith(`(POST ${base}/api/v1/chat/completions)`),
    wrongVerb.text,
  );
  const inside = await call(base, "GET", "/api/v1/nothing-here");
  assert.equal(inside.body, { error: { code: 404, message: "No route for GET /api/v1/nothing-here" } });
});

test.run();
