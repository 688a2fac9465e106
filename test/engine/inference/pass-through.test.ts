import type { JsonObject } from "@bufbuild/protobuf";
import { decodeWireJson } from "../../../wire/json-input.js";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import {
  ChatCompletionRequestSchema,
  CreateEmbeddingRequestSchema,
  InferenceService,
} from "../../../gen/gateway/v1/inference_pb.js";
import { call } from "../../support/http.js";
import { createGrpcClient, GrpcCallError, type GrpcClient } from "../../support/grpc-client.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { ledgerRowsOf, type LedgerRow } from "../../support/ledger-rows.js";
import { sseData } from "../../support/sse.js";

/**
 * Inference is JSON-native: what a client sends reaches the provider as sent, less the gateway's
 * own fields, and what the provider answers reaches the client, plus the gateway's own fields. The
 * typed methods (gRPC's) are an adapter into the same pipeline (`extra_body` in, `extra` out), so the same
 * call over REST and over gRPC sends the same upstream body and is billed the same.
 */
const test = suite<{ env: InferenceGateway; grpc: GrpcClient }>("inference: fields pass through");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
  ctx.grpc = createGrpcClient(InferenceService, ctx.env.gw.grpcUrl);
});
test.after(async (ctx) => {
  ctx.grpc.close();
  await ctx.env.stop();
});
test.before.each(({ env }) => env.upstream.reset());

/** OpenAI request fields the typed request message has no field for, each with a value of its own shape. */
const UNTYPED_FIELDS: JsonObject = {
  reasoning_effort: "high",
  service_tier: "flex",
  metadata: { team: "search", ticket: "A-17" },
  store: true,
  prediction: { type: "content", content: "Hello from" },
  modalities: ["text"],
  verbosity: "low",
  web_search_options: {
    search_context_size: "medium",
    user_location: { type: "approximate", approximate: { country: "NL" } },
  },
};

const HELLO = [{ role: "user", content: "Hi there" }];

function upstreamBody(env: InferenceGateway): JsonObject {
  const request = env.upstream.requests.at(-1);
  assert.ok(request, "the upstream was called");
  return request.body as JsonObject;
}

function auth(env: InferenceGateway): Record<string, string> {
  return { authorization: `Bearer ${env.gw.key}` };
}

test("every request field the gateway does not consume reaches the provider exactly as sent", async ({ env }) => {
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO, max_tokens: 5, ...UNTYPED_FIELDS },
  });
  assert.is(res.status, 200, res.text);
  const sent = upstreamBody(env);
  for (const [name, value] of Object.entries(UNTYPED_FIELDS)) assert.equal(sent[name], value, name);
  assert.equal(sent.messages, HELLO);
  assert.is(sent.max_tokens, 5);
});

test("the gateway's own fields stay at the gateway; streaming is the adapter's", async ({ env }) => {
  const body = {
    model: "mock/chat",
    models: ["mock/free"],
    messages: HELLO,
    provider: { allow_fallbacks: true },
    session_id: "s-1",
    user: "end-user-1",
    transforms: ["middle-out"],
    usage: { include: true },
    stream: true,
    stream_options: { include_usage: false },
    seed: 7,
  };
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", { key: env.gw.key, body });
  assert.is(res.status, 200, res.text);
  const sent = upstreamBody(env);
  for (const name of ["models", "provider", "session_id", "user", "transforms", "usage"])
    assert.not.ok(name in sent, `${name} was forwarded: ${JSON.stringify(sent)}`);
  assert.is(sent.model, "chat-a", "the upstream's own model id");
  assert.is(sent.stream, true);
  // The usage of a stream is always asked for, whatever the client said: the call is billed from it.
  assert.equal(sent.stream_options, { include_usage: true });
  assert.is(sent.seed, 7);
});

test(
  "embeddings: fields the gateway does not consume reach the provider; " + "encoding_format stays float upstream",
  async ({ env }) => {
    const res = await call(env.gw.url, "POST", "/api/v1/embeddings", {
      key: env.gw.key,
      body: {
        model: "mock/embed",
        input: "hi",
        dimensions: 4,
        encoding_format: "base64",
        truncate: "END",
        user: "u-2",
      },
    });
    assert.is(res.status, 200, res.text);
    const sent = upstreamBody(env);
    assert.is(sent.truncate, "END");
    assert.is(sent.dimensions, 4);
    assert.is(sent.encoding_format, "float");
    assert.not.ok("user" in sent);
    assert.type((res.body as { data: Array<{ embedding: unknown }> }).data[0]!.embedding, "string");
  },
);

test("an answer field the gateway does not know reaches the REST client, in the answer and in every chunk", async ({
  env,
}) => {
  const citations = ["https://example.com/a", "https://example.com/b"];
  env.upstream.rule({ answerFields: { citations, x_provider_note: { cached: false } } });
  const plain = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO },
  });
  assert.is(plain.status, 200, plain.text);
  const answer = plain.body as JsonObject;
  assert.equal(answer.citations, citations);
  assert.equal(answer.x_provider_note, { cached: false });
  // The gateway's own fields are still set over the provider's.
  assert.ok(String(answer.id).startsWith("gen-"), String(answer.id));
  assert.is(answer.model, "mock/chat");
  assert.is(answer.provider, "MockAI");
  assert.type((answer.usage as JsonObject).cost, "number");

  const streamed = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO, stream: true },
  });
  assert.is(streamed.status, 200, streamed.text);
  const chunks = sseData(streamed.text) as JsonObject[];
  const withChoices = chunks.filter((chunk) => Array.isArray(chunk.choices) && chunk.choices.length > 0);
  assert.ok(withChoices.length > 1, streamed.text);
  for (const chunk of withChoices) assert.equal(chunk.citations, citations, JSON.stringify(chunk));

  const embedded = await call(env.gw.url, "POST", "/api/v1/embeddings", {
    key: env.gw.key,
    body: { model: "mock/embed", input: "hi" },
  });
  assert.is(embedded.status, 200, embedded.text);
  assert.equal((embedded.body as JsonObject).citations, citations);
});

test("gRPC: an unknown answer field arrives in `extra`, in the completion and in the chunks", async ({ env, grpc }) => {
  env.upstream.rule({ answerFields: { citations: ["https://example.com/a"] } });
  const request = decodeWireJson(ChatCompletionRequestSchema, { model: "mock/chat", messages: HELLO });
  const completion = [];
  for await (const event of grpc.serverStream(InferenceService.method.createChatCompletion, request, auth(env))
    .messages)
    completion.push(event);
  assert.is(completion.length, 1);
  const reply = completion[0]!.event;
  assert.is(reply.case, "completion");
  assert.equal(reply.value?.extra, { citations: ["https://example.com/a"] });

  const streamed = decodeWireJson(ChatCompletionRequestSchema, { model: "mock/chat", messages: HELLO, stream: true });
  const chunks = [];
  for await (const event of grpc.serverStream(InferenceService.method.createChatCompletion, streamed, auth(env))
    .messages)
    chunks.push(event);
  const withChoices = chunks.flatMap((event) =>
    event.event.case === "chunk" && event.event.value.choices.length > 0 ? [event.event.value] : [],
  );
  assert.ok(withChoices.length > 1);
  for (const chunk of withChoices) assert.equal(chunk.extra, { citations: ["https://example.com/a"] });
});

test("gRPC: extra_body fields reach the provider as top-level fields; a field of the message is refused in it", async ({
  env,
  grpc,
}) => {
  const request = decodeWireJson(ChatCompletionRequestSchema, {
    model: "mock/chat",
    messages: HELLO,
    extra_body: UNTYPED_FIELDS,
  });
  for await (const _ of grpc.serverStream(InferenceService.method.createChatCompletion, request, auth(env)).messages);
  const sent = upstreamBody(env);
  for (const [name, value] of Object.entries(UNTYPED_FIELDS)) assert.equal(sent[name], value, name);
  assert.not.ok("extra_body" in sent);

  const embedding = decodeWireJson(CreateEmbeddingRequestSchema, {
    model: "mock/embed",
    input: "hi",
    extra_body: { truncate: "END" },
  });
  await grpc.unary(InferenceService.method.createEmbedding, embedding, auth(env));
  assert.is(upstreamBody(env).truncate, "END");

  const clash = decodeWireJson(ChatCompletionRequestSchema, {
    model: "mock/chat",
    messages: HELLO,
    extra_body: { temperature: 3 },
  });
  const err = await failure(async () => {
    for await (const _ of grpc.serverStream(InferenceService.method.createChatCompletion, clash, auth(env)).messages);
  });
  assert.is(err.detail?.httpStatus, 400);
  assert.match(err.details, "extra_body.temperature");
});

test("REST: extra_body means what it means over gRPC", async ({ env }) => {
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO, extra_body: { verbosity: "low" } },
  });
  assert.is(res.status, 200, res.text);
  assert.is(upstreamBody(env).verbosity, "low");
  const clash = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO, extra_body: { model: "mock/free" } },
  });
  assert.is(clash.status, 400, clash.text);
  assert.match(clash.text, "extra_body.model");
});

test("the Anthropic mapping does not send OpenAI-only parameters, and the call succeeds", async ({ env }) => {
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/claude", messages: HELLO, max_tokens: 16, ...UNTYPED_FIELDS },
  });
  assert.is(res.status, 200, res.text);
  const sent = upstreamBody(env);
  assert.match(env.upstream.requests.at(-1)!.path, "/messages");
  for (const name of Object.keys(UNTYPED_FIELDS)) assert.not.ok(name in sent, `${name} reached the Anthropic API`);
});

test(
  "parity: the same call over REST and over typed gRPC sends the same upstream body, " +
    "answers alike and is billed alike",
  async ({ env, grpc }) => {
    const body = {
      model: "mock/chat",
      messages: HELLO,
      max_tokens: 8,
      temperature: 0.5,
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      extra_body: { verbosity: "low" },
    };
    const rest = await call(env.gw.url, "POST", "/api/v1/chat/completions", { key: env.gw.key, body });
    assert.is(rest.status, 200, rest.text);
    const restUpstream = upstreamBody(env);
    const events = [];
    for await (const event of grpc.serverStream(
      InferenceService.method.createChatCompletion,
      decodeWireJson(ChatCompletionRequestSchema, body),
      auth(env),
    ).messages)
      events.push(event);
    const grpcUpstream = upstreamBody(env);
    assert.equal(grpcUpstream, restUpstream);

    const restAnswer = rest.body as JsonObject;
    const typed = events[0]!.event;
    assert.is(typed.case, "completion");
    if (typed.case !== "completion") return;
    assert.is(
      typed.value.choices[0]?.message?.content,
      ((restAnswer.choices as JsonObject[])[0]!.message as JsonObject).content,
    );
    assert.is(Number(typed.value.usage?.promptTokens), (restAnswer.usage as JsonObject).prompt_tokens);
    assert.is(typed.value.usage?.cost, (restAnswer.usage as JsonObject).cost);

    const comparable = (row: LedgerRow) => ({ ...row, generation_id: "", request_id: "" });
    const [restRow] = await ledgerRowsOf(env.gw, String(restAnswer.id));
    const [grpcRow] = await ledgerRowsOf(env.gw, typed.value.id);
    assert.ok(restRow && grpcRow);
    assert.equal(comparable(grpcRow), comparable(restRow));
  },
);

async function failure(run: () => Promise<void>): Promise<GrpcCallError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof GrpcCallError) return err;
    throw err;
  }
  throw new Error("the call succeeded");
}

test.run();
