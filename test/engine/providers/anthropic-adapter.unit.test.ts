import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { anthropicChat } from "../../../server/engine/providers/anthropic/chat.js";
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from "../../../server/engine/providers/anthropic/chat-request.js";
import {
  mockSuite,
  collect,
  collectUntilFailure,
  contentOf,
  deltas,
  failure,
  finishReasons,
  lastBody,
  signal,
  targetFor,
} from "./adapter-helpers.js";

const test = mockSuite("providers: Anthropic adapter");

const MODEL = "claude-mock";
const PNG = "iVBORw0KGgo=";
const choiceOf = (body: JsonObject) => (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;

test("request: system/developer, images, tool calls, merged tool results, tools and parameters are translated", async ({
  mock,
}) => {
  const weather = { type: "object", properties: { city: { type: "string" } } };
  const request: JsonObject = {
    model: "anthropic/claude",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "developer", content: [{ type: "text", text: "Answer in English." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in both photos?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: "image_url", image_url: { url: "https://example.com/b.jpg", detail: "high" } },
        ],
      },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "toolu_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_a", content: "sunny" },
      { role: "tool", tool_call_id: "toolu_b", content: [{ type: "text", text: "rainy" }] },
      { role: "user", content: "Thanks" },
    ],
    tools: [
      { type: "function", function: { name: "get_weather", description: "Current weather", parameters: weather } },
      { type: "function", function: { name: "no_params" } },
    ],
    tool_choice: "required",
    parallel_tool_calls: false,
    max_tokens: 50,
    max_completion_tokens: 100,
    temperature: 1.5,
    top_p: 0.9,
    top_k: 40,
    stop: "END",
    logprobs: true,
    top_logprobs: 3,
    seed: 7,
  };
  await anthropicChat.chat(targetFor(mock, "anthropic", MODEL), request, signal());
  const recorded = mock.requests[0];
  assert.is(recorded?.path, "/anthropic/v1/messages");
  assert.is(recorded?.headers["x-api-key"], mock.apiKey);
  assert.is(recorded?.headers["anthropic-version"], "2023-06-01");
  assert.is(recorded?.headers.authorization, undefined);
  assert.equal(recorded?.body, {
    model: MODEL,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in both photos?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          { type: "image", source: { type: "url", url: "https://example.com/b.jpg" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_b", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: "sunny" },
          { type: "tool_result", tool_use_id: "toolu_b", content: [{ type: "text", text: "rainy" }] },
          { type: "text", text: "Thanks" },
        ],
      },
    ],
    max_tokens: 100,
    system: [
      { type: "text", text: "You are terse." },
      { type: "text", text: "Answer in English." },
    ],
    temperature: 1,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ["END"],
    tools: [
      { name: "get_weather", input_schema: weather, description: "Current weather" },
      { name: "no_params", input_schema: { type: "object", properties: {} } },
    ],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
  });
});

test("request: max_tokens defaults, tool_choice forms, unsupported content", async ({ mock }) => {
  const target = targetFor(mock, "anthropic", MODEL);
  const tools = [{ type: "function", function: { name: "f" } }];
  await anthropicChat.chat(target, { messages: [{ role: "user", content: "hi" }] }, signal());
  assert.is(lastBody(mock).max_tokens, ANTHROPIC_DEFAULT_MAX_TOKENS);
  assert.is(lastBody(mock).tool_choice, undefined);
  for (const [choice, expected] of [
    ["auto", { type: "auto" }],
    ["none", { type: "none" }],
    [
      { type: "function", function: { name: "f" } },
      { type: "tool", name: "f" },
    ],
  ] as const) {
    await anthropicChat.chat(
      target,
      { messages: [{ role: "user", content: "hi" }], tools, tool_choice: choice },
      signal(),
    );
    assert.equal(lastBody(mock).tool_choice, expected);
  }
  const audio = await failure(
    anthropicChat.chat(
      target,
      { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x", format: "wav" } }] }] },
      signal(),
    ),
  );
  assert.is(audio.failure, "unsupported");
});

test("chat: the answer comes back as a chat.completion with usage and finish reasons", async ({ mock }) => {
  const result = await anthropicChat.chat(
    targetFor(mock, "anthropic", MODEL),
    {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello to everyone" },
      ],
    },
    signal(),
  );
  assert.is(result.body.object, "chat.completion");
  assert.is(result.body.model, MODEL);
  const choice = choiceOf(result.body);
  assert.equal(choice.message, { role: "assistant", content: `Hello from ${MODEL}` });
  assert.is(choice.finish_reason, "stop");
  assert.is(choice.native_finish_reason, "end_turn");
  assert.equal(result.usage, {
    promptTokens: 8,
    completionTokens: 3,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
  assert.equal((result.body.usage as Record<string, unknown>).total_tokens, 11);

  const cut = await anthropicChat.chat(
    targetFor(mock, "anthropic", MODEL),
    { messages: [{ role: "user", content: "hi" }], max_tokens: 1 },
    signal(),
  );
  assert.is(choiceOf(cut.body).finish_reason, "length");
  assert.is(choiceOf(cut.body).native_finish_reason, "max_tokens");
});

test("chat: cache reads and writes count into prompt tokens, reads as cached tokens", async ({ mock }) => {
  mock.rule({
    rawBody: JSON.stringify({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [{ type: "text", text: "ok" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 10, cache_read_input_tokens: 200, cache_creation_input_tokens: 30, output_tokens: 5 },
    }),
  });
  const result = await anthropicChat.chat(
    targetFor(mock, "anthropic", MODEL),
    { messages: [{ role: "user", content: "hi" }] },
    signal(),
  );
  assert.equal(result.usage, {
    promptTokens: 240,
    completionTokens: 5,
    reasoningTokens: 0,
    cachedTokens: 200,
    cacheWriteTokens: 30,
  });
  assert.equal((result.body.usage as Record<string, unknown>).prompt_tokens_details, {
    cached_tokens: 200,
    cache_write_tokens: 30,
  });
});

test("chat: tool_use becomes tool_calls with JSON-string arguments; thinking becomes reasoning", async ({ mock }) => {
  mock.rule({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' }, reasoning: "Need the weather tool." });
  const result = await anthropicChat.chat(
    targetFor(mock, "anthropic", MODEL),
    {
      messages: [{ role: "user", content: "Weather?" }],
      tools: [{ type: "function", function: { name: "get_weather" } }],
    },
    signal(),
  );
  const choice = choiceOf(result.body);
  assert.is(choice.finish_reason, "tool_calls");
  assert.is(choice.native_finish_reason, "tool_use");
  assert.equal(choice.message, {
    role: "assistant",
    content: null,
    reasoning: "Need the weather tool.",
    tool_calls: [
      {
        id: "toolu_mock_1",
        index: 0,
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
      },
    ],
  });
});

test("logprobs: requested but not forwarded (Anthropic has none)", async ({ mock }) => {
  const result = await anthropicChat.chat(
    targetFor(mock, "anthropic", MODEL),
    { messages: [{ role: "user", content: "hi" }], logprobs: true },
    signal(),
  );
  assert.is(lastBody(mock).logprobs, undefined);
  assert.is(choiceOf(result.body).logprobs, null);
});

test("chatStream: events become OpenAI chunks: role first, text deltas, finish, usage", async ({ mock }) => {
  const stream = await anthropicChat.chatStream(
    targetFor(mock, "anthropic", MODEL),
    { messages: [{ role: "user", content: "Say hello to everyone" }] },
    signal(),
  );
  assert.is(lastBody(mock).stream, true);
  const chunks = await collect(stream);
  assert.ok(
    chunks.every(
      (chunk) => chunk.object === "chat.completion.chunk" && chunk.id === "msg_mock_1" && chunk.model === MODEL,
    ),
  );
  assert.equal(deltas(chunks)[0], { role: "assistant", content: "" });
  assert.is(contentOf(chunks), `Hello from ${MODEL}`);
  assert.equal(finishReasons(chunks), ["stop"]);
  const finish = chunks
    .flatMap((chunk) => chunk.choices as Array<Record<string, unknown>>)
    .find((c) => c.finish_reason !== null);
  assert.is(finish?.native_finish_reason, "end_turn");
  assert.equal(stream.usage(), {
    promptTokens: 6,
    completionTokens: 3,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
  const last = chunks[chunks.length - 1];
  assert.equal(last?.choices, []);
  assert.is((last?.usage as Record<string, unknown> | undefined)?.total_tokens, 9);
});

test("chatStream: tool_use streams as tool call fragments; thinking as reasoning deltas", async ({ mock }) => {
  mock.rule({
    reply: "Let me check.",
    toolCall: { name: "lookup", arguments: '{"q":"weather in Paris"}' },
    reasoning: "Think first.",
  });
  const chunks = await collect(
    await anthropicChat.chatStream(
      targetFor(mock, "anthropic", MODEL),
      { messages: [{ role: "user", content: "?" }], tools: [{ type: "function", function: { name: "lookup" } }] },
      signal(),
    ),
  );
  const all = deltas(chunks);
  assert.is(all.map((d) => (typeof d.reasoning === "string" ? d.reasoning : "")).join(""), "Think first.");
  assert.is(contentOf(chunks), "Let me check.");
  const calls = all.flatMap((d) => (Array.isArray(d.tool_calls) ? d.tool_calls : [])) as Array<Record<string, unknown>>;
  assert.equal(calls[0], {
    index: 0,
    id: "toolu_mock_1",
    type: "function",
    function: { name: "lookup", arguments: "" },
  });
  assert.ok(calls.length >= 3, "the arguments arrive in fragments");
  assert.ok(calls.slice(1).every((c) => c.index === 0 && c.id === undefined));
  assert.is(calls.map((c) => (c.function as Record<string, unknown>).arguments).join(""), '{"q":"weather in Paris"}');
  assert.equal(finishReasons(chunks), ["tool_calls"]);
});

test("status errors: Anthropic's error message, overloaded 529, rate limit with Retry-After", async ({ mock }) => {
  const target = targetFor(mock, "anthropic", MODEL);
  mock.rule({ status: 529, times: 1 });
  const overloaded = await failure(
    anthropicChat.chat(target, { messages: [{ role: "user", content: "hi" }] }, signal()),
  );
  assert.is(overloaded.failure, "status");
  assert.is(overloaded.options.status, 529);
  assert.is(overloaded.message, "mock upstream failure 529");

  mock.rule({ status: 429, retryAfter: 12, times: 1 });
  const limited = await failure(
    anthropicChat.chatStream(target, { messages: [{ role: "user", content: "hi" }] }, signal()),
  );
  assert.equal([limited.failure, limited.options.status, limited.options.retryAfterS], ["status", 429, 12]);

  const wrongKey = await failure(
    anthropicChat.chat(
      { ...target, apiKey: "sk-ant-wrong-key-0123456789" },
      { messages: [{ role: "user", content: "hi" }] },
      signal(),
    ),
  );
  assert.is(wrongKey.options.status, 401);
  assert.not.match(wrongKey.message, "0123456789");
});

test("chatStream: an in-stream error event fails the iterator with the status of its type", async ({ mock }) => {
  mock.rule({ streamError: { afterChunks: 3, type: "overloaded_error", message: "Overloaded" }, times: 1 });
  const { chunks, error } = await collectUntilFailure(
    await anthropicChat.chatStream(
      targetFor(mock, "anthropic", MODEL),
      { messages: [{ role: "user", content: "hi" }] },
      signal(),
    ),
  );
  assert.ok(chunks.length >= 1);
  assert.equal([error.failure, error.options.status, error.message], ["status", 529, "Overloaded"]);

  mock.rule({ streamError: { afterChunks: 1, type: "api_error" } });
  const api = await collectUntilFailure(
    await anthropicChat.chatStream(
      targetFor(mock, "anthropic", MODEL),
      { messages: [{ role: "user", content: "hi" }] },
      signal(),
    ),
  );
  assert.is(api.error.options.status, 502);
});

test("chatStream: a stream cut before message_stop throws cut", async ({ mock }) => {
  mock.rule({ cutAfterChunks: 4 });
  const { chunks, error } = await collectUntilFailure(
    await anthropicChat.chatStream(
      targetFor(mock, "anthropic", MODEL),
      { messages: [{ role: "user", content: "hi" }] },
      signal(),
    ),
  );
  assert.is(error.failure, "cut");
  assert.ok(chunks.length >= 1, "the chunks before the cut were delivered");
});

test("chatStream: a clean end without message_stop is a cut too", async ({ mock }) => {
  mock.rule({ endAfterChunks: 5 });
  const { chunks, error } = await collectUntilFailure(
    await anthropicChat.chatStream(
      targetFor(mock, "anthropic", MODEL),
      { messages: [{ role: "user", content: "hi" }] },
      signal(),
    ),
  );
  assert.is(error.failure, "cut");
  assert.ok(chunks.length >= 1);
});

test("protocol: a JSON answer to a stream request, or a message without content", async ({ mock }) => {
  mock.rule({ rawBody: JSON.stringify({ id: "msg_1", type: "message" }) });
  const target = targetFor(mock, "anthropic", MODEL);
  const stream = await failure(
    anthropicChat.chatStream(target, { messages: [{ role: "user", content: "hi" }] }, signal()),
  );
  assert.is(stream.failure, "protocol");
  const plain = await failure(anthropicChat.chat(target, { messages: [{ role: "user", content: "hi" }] }, signal()));
  assert.is(plain.failure, "protocol");
});

test("embeddings are unsupported", async ({ mock }) => {
  const error = await failure(anthropicChat.embeddings(targetFor(mock, "anthropic", MODEL), { input: "x" }, signal()));
  assert.is(error.failure, "unsupported");
  assert.is(mock.requests.length, 0);
});

test.run();
