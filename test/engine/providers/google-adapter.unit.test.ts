import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { googleChat } from "../../../server/engine/providers/google/chat.js";
import { googleProvider } from "../../../server/engine/providers/google/provider.js";
import type { UpstreamTarget } from "../../../server/engine/providers/provider.js";
import {
  collect,
  collectUntilFailure,
  contentOf,
  deltas,
  failure,
  finishReasons,
  lastBody,
  mockSuite,
  signal,
  targetFor,
} from "./adapter-helpers.js";
import type { MockUpstream } from "../../upstream/mock-upstream.js";

/** The Gemini API behind the chat format, against the mock's Gemini routes. */
const test = mockSuite("providers: Google (Gemini API) adapter");

const MODEL = "gemini-mock";
const hi = { messages: [{ role: "user", content: "hi" }] };
const choiceOf = (body: JsonObject) => (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
const gemini = (mock: MockUpstream, overrides: Partial<UpstreamTarget> = {}) =>
  targetFor(mock, "google", MODEL, { baseUrl: mock.googleBaseUrl, ...overrides });

test(
  "chat: the key goes in x-goog-api-key to :generateContent; " + "text comes back as a chat.completion with usage",
  async ({ mock }) => {
    const result = await googleChat.chat(
      gemini(mock),
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Say hello to everyone" },
        ],
      },
      signal(),
    );
    const recorded = mock.requests[0];
    assert.is(recorded?.path, `/google/v1beta/models/${MODEL}:generateContent`);
    assert.is(recorded?.headers["x-goog-api-key"], mock.apiKey);
    assert.is(recorded?.headers.authorization, undefined);
    assert.is(result.body.object, "chat.completion");
    assert.is(result.body.id, "gemini-mock-1");
    assert.is(result.body.model, MODEL);
    const choice = choiceOf(result.body);
    assert.equal(choice.message, { role: "assistant", content: `Hello from ${MODEL}` });
    assert.equal([choice.finish_reason, choice.native_finish_reason], ["stop", "STOP"]);
    // "Be brief." + "Say hello to everyone" = 30 characters: 8 prompt tokens.
    assert.equal(result.usage, { promptTokens: 8, completionTokens: 3, reasoningTokens: 0, cachedTokens: 0 });
    assert.is((result.body.usage as Record<string, unknown>).total_tokens, 11);

    const cut = await googleChat.chat(gemini(mock), { ...hi, max_tokens: 1 }, signal());
    assert.equal([choiceOf(cut.body).finish_reason, choiceOf(cut.body).native_finish_reason], ["length", "MAX_TOKENS"]);
    assert.equal(lastBody(mock).generationConfig, { maxOutputTokens: 1 });
  },
);

test("chat: the model id is escaped as one path segment", async ({ mock }) => {
  await googleChat.chat(gemini(mock, { upstreamModelId: "tuned model/1" }), hi, signal());
  assert.is(mock.requests[0]?.path, "/google/v1beta/models/tuned%20model%2F1:generateContent");
});

test(
  "chat: thoughts become reasoning, a functionCall becomes tool_calls with its signature; " +
    "thoughts and cache in usage",
  async ({ mock }) => {
    mock.rule({
      toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' },
      reasoning: "Need the weather tool.",
      times: 1,
    });
    const result = await googleChat.chat(
      gemini(mock),
      {
        messages: [{ role: "user", content: "Weather?" }],
        tools: [{ type: "function", function: { name: "get_weather" } }],
      },
      signal(),
    );
    const choice = choiceOf(result.body);
    assert.equal([choice.finish_reason, choice.native_finish_reason], ["tool_calls", "STOP"]);
    const message = choice.message as Record<string, unknown>;
    assert.is(message.content, null);
    assert.is(message.reasoning, "Need the weather tool.");
    const calls = message.tool_calls as Array<Record<string, unknown>>;
    assert.is(calls.length, 1);
    assert.match(String(calls[0]?.id), /^call_[0-9a-f]{12}_0$/);
    assert.equal(
      { ...calls[0], id: "" },
      {
        id: "",
        index: 0,
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
        extra_content: { google: { thought_signature: "mock-signature-1" } },
      },
    );
    // 4 thought words and ceil(16 / 4) argument tokens: thoughts count as completion and as reasoning.
    assert.equal(result.usage, { promptTokens: 2, completionTokens: 8, reasoningTokens: 4, cachedTokens: 0 });

    mock.rule({ usage: { prompt_tokens: 300, completion_tokens: 5, cached_tokens: 200 } });
    const cached = await googleChat.chat(gemini(mock), hi, signal());
    assert.equal(cached.usage, { promptTokens: 300, completionTokens: 5, reasoningTokens: 0, cachedTokens: 200 });
    assert.equal((cached.body.usage as Record<string, unknown>).prompt_tokens_details, { cached_tokens: 200 });
  },
);

test("chat: the tool call ids of two answers differ, so a conversation can hold both", async ({ mock }) => {
  mock.rule({ toolCall: { name: "f", arguments: "{}" } });
  const ids = [];
  for (let i = 0; i < 2; i++) {
    const result = await googleChat.chat(gemini(mock), hi, signal());
    ids.push(
      ((choiceOf(result.body).message as Record<string, unknown>).tool_calls as Array<Record<string, unknown>>)[0]?.id,
    );
  }
  assert.is.not(ids[0], ids[1]);
});

test("chat: finish reasons and prompt blocks", async ({ mock }) => {
  const answer = (finishReason: string, parts: JsonObject[] = [{ text: "x" }]) =>
    JSON.stringify({ candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }] });
  for (const [reason, expected] of [
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["MALFORMED_FUNCTION_CALL", "error"],
    ["OTHER", "stop"],
  ]) {
    mock.rule({ rawBody: answer(reason as string), times: 1 });
    const result = await googleChat.chat(gemini(mock), hi, signal());
    assert.equal([choiceOf(result.body).finish_reason, choiceOf(result.body).native_finish_reason], [expected, reason]);
    assert.is(result.usage, undefined);
  }
  mock.rule({
    rawBody: JSON.stringify({
      promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
      usageMetadata: { promptTokenCount: 5 },
    }),
    times: 1,
  });
  const blocked = await failure(googleChat.chat(gemini(mock), hi, signal()));
  assert.equal([blocked.failure, blocked.options.status], ["status", 400]);
  assert.match(blocked.message, "PROHIBITED_CONTENT");
  mock.rule({ rawBody: JSON.stringify({ candidates: [] }), times: 1 });
  assert.is((await failure(googleChat.chat(gemini(mock), hi, signal()))).failure, "protocol");
});

test("chatStream: :streamGenerateContent?alt=sse; role first, text deltas, finish, usage at the end", async ({
  mock,
}) => {
  const stream = await googleChat.chatStream(
    gemini(mock),
    { messages: [{ role: "user", content: "Say hello to everyone" }] },
    signal(),
  );
  assert.is(mock.requests[0]?.path, `/google/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  const chunks = await collect(stream);
  assert.ok(
    chunks.every(
      (chunk) => chunk.object === "chat.completion.chunk" && chunk.id === "gemini-mock-1" && chunk.model === MODEL,
    ),
  );
  assert.equal(deltas(chunks)[0], { role: "assistant", content: "" });
  assert.is(contentOf(chunks), `Hello from ${MODEL}`);
  assert.equal(finishReasons(chunks), ["stop"]);
  assert.equal(stream.usage(), { promptTokens: 6, completionTokens: 3, reasoningTokens: 0, cachedTokens: 0 });
  const last = chunks[chunks.length - 1];
  assert.equal(last?.choices, []);
  assert.is((last?.usage as Record<string, unknown> | undefined)?.total_tokens, 9);
});

test("chatStream: thoughts stream as reasoning, a call as one tool call chunk, finish tool_calls", async ({ mock }) => {
  mock.rule({
    reply: "Let me check.",
    toolCall: { name: "lookup", arguments: '{"q":"weather in Paris"}' },
    reasoning: "Think first.",
  });
  const stream = await googleChat.chatStream(
    gemini(mock),
    { messages: [{ role: "user", content: "?" }], tools: [{ type: "function", function: { name: "lookup" } }] },
    signal(),
  );
  const chunks = await collect(stream);
  const all = deltas(chunks);
  assert.is(all.map((d) => (typeof d.reasoning === "string" ? d.reasoning : "")).join(""), "Think first.");
  assert.is(contentOf(chunks), "Let me check.");
  const calls = all.flatMap((d) => (Array.isArray(d.tool_calls) ? d.tool_calls : [])) as Array<Record<string, unknown>>;
  assert.is(calls.length, 1);
  assert.match(String(calls[0]?.id), /^call_[0-9a-f]{12}_0$/);
  assert.equal(
    { ...calls[0], id: "" },
    {
      id: "",
      index: 0,
      type: "function",
      function: { name: "lookup", arguments: '{"q":"weather in Paris"}' },
      extra_content: { google: { thought_signature: "mock-signature-1" } },
    },
  );
  assert.equal(finishReasons(chunks), ["tool_calls"]);
  assert.equal(stream.usage()?.reasoningTokens, 2);
});

test("chatStream: a stream cut before its finishReason, or ended cleanly without one, is cut", async ({ mock }) => {
  mock.rule({ cutAfterChunks: 2, times: 1 });
  const cut = await collectUntilFailure(await googleChat.chatStream(gemini(mock), hi, signal()));
  assert.is(cut.error.failure, "cut");
  assert.ok(cut.chunks.length >= 1, "the chunks before the cut were delivered");

  mock.rule({ endAfterChunks: 3, times: 1 });
  const ended = await collectUntilFailure(await googleChat.chatStream(gemini(mock), hi, signal()));
  assert.is(ended.error.failure, "cut");
  // Every word arrived; only the finish did not.
  assert.is(contentOf(ended.chunks), `Hello from ${MODEL}`);
});

test("chatStream: an in-stream error fails the iterator with the status of its code", async ({ mock }) => {
  mock.rule({ streamError: { afterChunks: 2, type: "RESOURCE_EXHAUSTED", message: "Quota exceeded" }, times: 1 });
  const { chunks, error } = await collectUntilFailure(await googleChat.chatStream(gemini(mock), hi, signal()));
  assert.ok(chunks.length >= 1);
  assert.equal([error.failure, error.options.status, error.message], ["status", 429, "Quota exceeded"]);
});

test("errors: status, Retry-After, in-body errors by status name, a wrong or missing key never leaked", async ({
  mock,
}) => {
  mock.rule({ status: 429, retryAfter: 12, times: 1 });
  const limited = await failure(googleChat.chat(gemini(mock), hi, signal()));
  assert.equal(
    [limited.failure, limited.options.status, limited.options.retryAfterS, limited.message],
    ["status", 429, 12, "mock upstream failure 429"],
  );

  mock.rule({ status: 400, times: 1 });
  const invalid = await failure(googleChat.chatStream(gemini(mock), hi, signal()));
  assert.equal([invalid.failure, invalid.options.status], ["status", 400]);

  mock.rule({
    rawBody: JSON.stringify({ error: { message: "The caller does not have permission", status: "PERMISSION_DENIED" } }),
    times: 1,
  });
  const denied = await failure(googleChat.chat(gemini(mock), hi, signal()));
  assert.equal(
    [denied.failure, denied.options.status, denied.message],
    ["status", 403, "The caller does not have permission"],
  );

  const wrongKey = "AIzaWrongKey0123456789";
  const refused = await failure(googleChat.chat(gemini(mock, { apiKey: wrongKey }), hi, signal()));
  assert.is(refused.options.status, 401);
  assert.not.match(refused.message, "0123456789");
  assert.is(mock.requests[mock.requests.length - 1]?.headers["x-goog-api-key"], wrongKey);
});

test("mock: a request without a key is refused in Gemini's error shape", async ({ mock }) => {
  const response = await fetch(`${mock.googleBaseUrl}/models/${MODEL}:generateContent`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contents: [] }),
  });
  assert.is(response.status, 401);
  const body = (await response.json()) as { error: Record<string, unknown> };
  assert.equal([body.error.code, body.error.status], [401, "UNAUTHENTICATED"]);
});

test("embeddings: one batchEmbedContents request per input, vectors in input order, dimensions and task type", async ({
  mock,
}) => {
  const result = await googleChat.embeddings(
    gemini(mock, { upstreamModelId: "gemini-embedding-mock" }),
    { input: ["first input", "second", "third one here"], dimensions: 4, input_type: "query" },
    signal(),
  );
  assert.is(mock.requests[0]?.path, "/google/v1beta/models/gemini-embedding-mock:batchEmbedContents");
  const body = lastBody(mock) as { requests: JsonObject[] };
  assert.equal(body.requests[1], {
    model: "models/gemini-embedding-mock",
    content: { parts: [{ text: "second" }] },
    taskType: "RETRIEVAL_QUERY",
    outputDimensionality: 4,
  });
  assert.is(result.vectors.length, 3);
  assert.ok(result.vectors.every((vector) => vector.length === 4));
  // Each input's own vector, in order: the mock derives it from the input's text.
  const single = await googleChat.embeddings(
    gemini(mock, { upstreamModelId: "gemini-embedding-mock" }),
    { input: "first input", dimensions: 4 },
    signal(),
  );
  assert.equal(single.vectors[0], result.vectors[0]);
  assert.is.not(JSON.stringify(result.vectors[0]), JSON.stringify(result.vectors[2]));
  assert.is((lastBody(mock) as { requests: JsonObject[] }).requests[0]?.taskType, undefined);
  // Gemini reports no count: ceil(11/4) + ceil(6/4) + ceil(14/4) = 3 + 2 + 4.
  assert.is(result.promptTokens, 9);
  const tokens = await failure(googleChat.embeddings(gemini(mock), { input: [[1, 2, 3]] }, signal()));
  assert.is(tokens.failure, "unsupported");
});

test("probe: the smallest generateContent call, answered with candidates", async ({ mock }) => {
  const probe = googleProvider.probe.request(MODEL, mock.apiKey);
  const response = await fetch(`${mock.googleBaseUrl}${probe.path}`, {
    method: "POST",
    headers: { ...probe.headers, "content-type": "application/json" },
    body: probe.body,
  });
  assert.is(response.status, 200);
  assert.ok(googleProvider.probe.answers(await response.json()));
  assert.equal(lastBody(mock).generationConfig, { maxOutputTokens: 1 });
  assert.not.ok(googleProvider.probe.answers({ choices: [] }));
});

test.run();
