import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { openAiChat } from "../../../server/engine/providers/openai/chat.js";
import { mockVector } from "../../upstream/mock-upstream.js";
import {
  mockSuite,
  collect,
  contentOf,
  deltas,
  finishReasons,
  lastBody,
  signal,
  targetFor,
} from "./adapter-helpers.js";

const test = mockSuite("providers: OpenAI adapter");

const MODEL = "gpt-mock";
const messages = [
  { role: "system", content: "Be brief." },
  { role: "user", content: [{ type: "text", text: "Say hello to everyone" }] },
];
// ceil((9 + 21) / 4): the mock's prompt count over all message text.
const PROMPT_TOKENS = 8;

test("chat: sends the upstream model id with a Bearer key and returns the completion with its usage", async ({
  mock,
}) => {
  const result = await openAiChat.chat(
    targetFor(mock, "openai", MODEL),
    { model: "acme/gateway-name", messages, temperature: 0.3, stream: true },
    signal(),
  );
  const sent = lastBody(mock);
  assert.is(sent.model, MODEL);
  assert.is(sent.temperature, 0.3);
  assert.is(sent.stream, undefined, "a non-streamed call never asks for a stream");
  assert.is(mock.requests[0]?.headers.authorization, `Bearer ${mock.apiKey}`);
  assert.is(mock.requests[0]?.path, "/openai/v1/chat/completions");
  const choice = (result.body.choices as Array<Record<string, unknown>>)[0];
  assert.equal(choice?.message, { role: "assistant", content: `Hello from ${MODEL}` });
  assert.is(choice?.finish_reason, "stop");
  assert.equal(result.usage, {
    promptTokens: PROMPT_TOKENS,
    completionTokens: 3,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
});

test("chat: max_completion_tokens below the reply length ends with finish_reason length", async ({ mock }) => {
  const result = await openAiChat.chat(
    targetFor(mock, "openai", MODEL),
    { messages, max_completion_tokens: 2 },
    signal(),
  );
  const choice = (result.body.choices as Array<Record<string, unknown>>)[0];
  assert.equal(choice?.message, { role: "assistant", content: "Hello from " });
  assert.is(choice?.finish_reason, "length");
  assert.is(result.usage?.completionTokens, 2);
});

test("chat: reasoning and cached token details are read from usage", async ({ mock }) => {
  mock.rule({
    rawBody: JSON.stringify({
      id: "x",
      object: "chat.completion",
      created: 1,
      model: MODEL,
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        completion_tokens_details: { reasoning_tokens: 25 },
        prompt_tokens_details: { cached_tokens: 64 },
      },
    }),
  });
  const result = await openAiChat.chat(targetFor(mock, "openai", MODEL), { messages }, signal());
  assert.equal(result.usage, {
    promptTokens: 100,
    completionTokens: 40,
    reasoningTokens: 25,
    cachedTokens: 64,
    cacheWriteTokens: 0,
  });
});

test("chatStream: asks for usage, chunks reassemble to the reply, usage arrives after the end", async ({ mock }) => {
  const stream = await openAiChat.chatStream(
    targetFor(mock, "openai", MODEL),
    { messages, stream_options: { include_obfuscation: false } },
    signal(),
  );
  const sent = lastBody(mock);
  assert.is(sent.stream, true);
  assert.equal(sent.stream_options, { include_obfuscation: false, include_usage: true });
  assert.is(stream.usage(), undefined, "no usage before the stream ended");
  const chunks = await collect(stream);
  assert.is(deltas(chunks)[0]?.role, "assistant");
  assert.is(contentOf(chunks), `Hello from ${MODEL}`);
  assert.ok(chunks.length >= 4, "one chunk per word, plus role and finish chunks");
  assert.equal(finishReasons(chunks), ["stop"]);
  assert.equal(stream.usage(), {
    promptTokens: PROMPT_TOKENS,
    completionTokens: 3,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
  const last = chunks[chunks.length - 1];
  assert.equal(last?.choices, [], "the usage chunk passes through as OpenAI sends it");
});

test("tools, tool_choice, response_format pass through untouched; the tool call comes back", async ({ mock }) => {
  mock.rule({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' } });
  const tools = [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "Weather",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    },
  ];
  const request: JsonObject = {
    messages: [
      ...messages,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
    ],
    tools,
    tool_choice: "required",
    parallel_tool_calls: false,
    response_format: { type: "json_object" },
  };
  const result = await openAiChat.chat(targetFor(mock, "openai", MODEL), request, signal());
  const sent = lastBody(mock);
  assert.equal(sent.tools, tools);
  assert.equal(sent.messages, request.messages);
  assert.is(sent.tool_choice, "required");
  assert.is(sent.parallel_tool_calls, false);
  assert.equal(sent.response_format, { type: "json_object" });
  const choice = (result.body.choices as Array<Record<string, unknown>>)[0];
  assert.is(choice?.finish_reason, "tool_calls");
  const message = choice?.message as Record<string, unknown>;
  assert.is(message.content, null);
  assert.equal((message.tool_calls as Array<Record<string, unknown>>)[0]?.function, {
    name: "get_weather",
    arguments: '{"city":"Paris"}',
  });
});

test("chatStream: tool call fragments arrive with index, id and name first, then the arguments", async ({ mock }) => {
  mock.rule({ toolCall: { name: "lookup", arguments: '{"q":"abc"}' } });
  const chunks = await collect(
    await openAiChat.chatStream(
      targetFor(mock, "openai", MODEL),
      { messages, tools: [{ type: "function", function: { name: "lookup" } }] },
      signal(),
    ),
  );
  const calls = deltas(chunks).flatMap((d) => (Array.isArray(d.tool_calls) ? d.tool_calls : [])) as Array<
    Record<string, unknown>
  >;
  assert.is(calls[0]?.id, "call_mock_1");
  assert.equal(calls[0]?.function, { name: "lookup", arguments: "" });
  assert.is(calls.map((c) => (c.function as Record<string, unknown>).arguments).join(""), '{"q":"abc"}');
  assert.ok(calls.every((c) => c.index === 0));
  assert.equal(finishReasons(chunks), ["tool_calls"]);
});

test("logprobs: the request flags pass through and the provider's logprobs come back as sent", async ({ mock }) => {
  const result = await openAiChat.chat(
    targetFor(mock, "openai", MODEL),
    { messages, logprobs: true, top_logprobs: 2 },
    signal(),
  );
  assert.is(lastBody(mock).logprobs, true);
  assert.is(lastBody(mock).top_logprobs, 2);
  const logprobs = (result.body.choices as Array<Record<string, unknown>>)[0]?.logprobs as {
    content: Array<Record<string, unknown>>;
  };
  assert.equal(
    logprobs.content.map((entry) => entry.token),
    ["Hello ", "from ", MODEL],
  );
  assert.is((logprobs.content[0]?.top_logprobs as unknown[] | undefined)?.length, 2);

  const custom = [{ token: "Hi", logprob: -0.5, top_logprobs: [{ token: "Hi", logprob: -0.5 }] }];
  mock.rule({ reply: "Hi", logprobs: custom });
  const chunks = await collect(
    await openAiChat.chatStream(targetFor(mock, "openai", MODEL), { messages, logprobs: true }, signal()),
  );
  const streamed = chunks
    .flatMap((chunk) => chunk.choices as Array<Record<string, unknown>>)
    .flatMap((choice) => (choice.logprobs ? (choice.logprobs as { content: unknown[] }).content : []));
  assert.equal(streamed, custom);
});

test("embeddings: always float, every other field as the pipeline passed it, vectors in input order", async ({
  mock,
}) => {
  // The pipeline has already removed the gateway's own fields (request-fields.ts); the adapter sets
  // model and format only.
  const result = await openAiChat.embeddings(
    targetFor(mock, "openai", "embed-mock"),
    { input: ["first", "second"], dimensions: 4, encoding_format: "base64", truncate: "END" },
    signal(),
  );
  const sent = lastBody(mock);
  assert.equal(sent, {
    model: "embed-mock",
    input: ["first", "second"],
    encoding_format: "float",
    dimensions: 4,
    truncate: "END",
  });
  assert.is(mock.requests[0]?.path, "/openai/v1/embeddings");
  assert.equal(result.vectors, [mockVector("first", 4), mockVector("second", 4)]);
  assert.is(result.promptTokens, Math.ceil("firstsecond".length / 4));

  await openAiChat.embeddings(targetFor(mock, "openai", "embed-mock"), { input: "one", input_type: "query" }, signal());
  assert.equal(lastBody(mock), { model: "embed-mock", input: "one", encoding_format: "float", input_type: "query" });
});

test("embeddings: vectors are ordered by the index the provider gives", async ({ mock }) => {
  mock.rule({
    rawBody: JSON.stringify({
      object: "list",
      data: [
        { index: 1, embedding: [2] },
        { index: 0, embedding: [1] },
      ],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    }),
  });
  const result = await openAiChat.embeddings(targetFor(mock, "openai", "embed-mock"), { input: ["a", "b"] }, signal());
  assert.equal(result.vectors, [[1], [2]]);
  assert.is(result.promptTokens, 3);
});

test.run();
