import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { bedrockChat } from "../../../server/engine/providers/bedrock/chat.js";
import type { AwsCredentials, UpstreamTarget } from "../../../server/engine/providers/provider.js";
import { MOCK_AWS, MOCK_AWS_SESSION } from "../../upstream/mock-bedrock.js";
import type { MockUpstream } from "../../upstream/mock-upstream.js";
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

const test = mockSuite("providers: Bedrock adapter");

const MODEL = "anthropic.claude-mock-v1:0";
const PNG = "iVBORw0KGgo=";
const hi = { messages: [{ role: "user", content: "hi" }] };
const choiceOf = (body: JsonObject) => (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;

/**
 * A Bedrock API key (bearer) target, or with `aws` a SigV4-signed one whose apiKey is the secret,
 * as the gateway builds them.
 */
function bedrock(mock: MockUpstream, aws?: AwsCredentials, model = MODEL): UpstreamTarget {
  const target = targetFor(mock, "bedrock", model, { baseUrl: mock.bedrockBaseUrl });
  return aws ? { ...target, apiKey: aws.secretAccessKey, settings: { aws } } : target;
}

test(
  "request: system/developer, merged roles, image bytes, " +
    "tool calls and results, tools, tool_choice and inferenceConfig",
  async ({ mock }) => {
    const weather = { type: "object", properties: { city: { type: "string" } } };
    await bedrockChat.chat(
      bedrock(mock),
      {
        model: "bedrock/claude",
        messages: [
          { role: "system", content: "You are terse." },
          {
            role: "developer",
            content: [{ type: "text", text: "Answer in English.", cache_control: { type: "ephemeral" } }],
          },
          { role: "user", content: "Look:" },
          { role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] },
          {
            role: "assistant",
            content: "Checking.",
            tool_calls: [
              { id: "tu_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
              { id: "tu_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: "tool", tool_call_id: "tu_a", content: "sunny" },
          { role: "tool", tool_call_id: "tu_b", content: [{ type: "text", text: "rainy" }] },
          { role: "user", content: "Thanks" },
        ],
        tools: [
          { type: "function", function: { name: "get_weather", description: "Current weather", parameters: weather } },
          { type: "function", function: { name: "no_params" } },
        ],
        tool_choice: { type: "function", function: { name: "get_weather" } },
        max_tokens: 50,
        max_completion_tokens: 100,
        temperature: 1.5,
        top_p: 0.9,
        top_k: 40,
        stop: ["END"],
        seed: 7,
        logprobs: true,
      },
      signal(),
    );
    const recorded = mock.requests[0];
    assert.is(recorded?.path, `/bedrock/model/${encodeURIComponent(MODEL)}/converse`);
    assert.is(recorded?.headers.authorization, `Bearer ${mock.apiKey}`);
    assert.equal(recorded?.body, {
      messages: [
        { role: "user", content: [{ text: "Look:" }, { image: { format: "png", source: { bytes: PNG } } }] },
        {
          role: "assistant",
          content: [
            { text: "Checking." },
            { toolUse: { toolUseId: "tu_a", name: "get_weather", input: { city: "Paris" } } },
            { toolUse: { toolUseId: "tu_b", name: "get_weather", input: { city: "Rome" } } },
          ],
        },
        {
          role: "user",
          content: [
            { toolResult: { toolUseId: "tu_a", content: [{ text: "sunny" }] } },
            { toolResult: { toolUseId: "tu_b", content: [{ text: "rainy" }] } },
            { text: "Thanks" },
          ],
        },
      ],
      system: [{ text: "You are terse." }, { text: "Answer in English." }, { cachePoint: { type: "default" } }],
      inferenceConfig: { maxTokens: 100, temperature: 1, topP: 0.9, stopSequences: ["END"] },
      toolConfig: {
        tools: [
          { toolSpec: { name: "get_weather", inputSchema: { json: weather }, description: "Current weather" } },
          { toolSpec: { name: "no_params", inputSchema: { json: { type: "object", properties: {} } } } },
        ],
        toolChoice: { tool: { name: "get_weather" } },
      },
      additionalModelRequestFields: { top_k: 40 },
    });
  },
);

test("request: tool_choice forms, none sends no tools, top_k only where documented, unsupported content", async ({
  mock,
}) => {
  const tools = [{ type: "function", function: { name: "f" } }];
  for (const [choice, expected] of [
    ["auto", { auto: {} }],
    ["required", { any: {} }],
  ] as const) {
    await bedrockChat.chat(bedrock(mock), { ...hi, tools, tool_choice: choice }, signal());
    assert.equal((lastBody(mock).toolConfig as JsonObject).toolChoice, expected);
  }
  await bedrockChat.chat(bedrock(mock), { ...hi, tools, tool_choice: "none" }, signal());
  assert.is(lastBody(mock).toolConfig, undefined);
  await bedrockChat.chat(bedrock(mock, undefined, "meta.llama-mock-v1:0"), { ...hi, top_k: 5 }, signal());
  assert.is(lastBody(mock).additionalModelRequestFields, undefined);
  await bedrockChat.chat(bedrock(mock, undefined, "us.amazon.nova-mock-v1:0"), { ...hi, top_k: 5 }, signal());
  assert.equal(lastBody(mock).additionalModelRequestFields, { inferenceConfig: { topK: 5 } });

  const before = mock.requests.length;
  const url = await failure(
    bedrockChat.chat(
      bedrock(mock),
      {
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }],
      },
      signal(),
    ),
  );
  assert.is(url.failure, "unsupported");
  assert.match(url.message, "data: URLs");
  const tiff = await failure(
    bedrockChat.chat(
      bedrock(mock),
      {
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: `data:image/tiff;base64,${PNG}` } }] },
        ],
      },
      signal(),
    ),
  );
  assert.is(tiff.failure, "unsupported");
  assert.is(mock.requests.length, before, "nothing was sent");
});

test("SigV4: a signed call succeeds; the mock verified the signature over the escaped model id", async ({ mock }) => {
  const target = bedrock(mock, { ...MOCK_AWS });
  const result = await bedrockChat.chat(target, hi, signal());
  assert.is(choiceOf(result.body).finish_reason, "stop");
  const headers = mock.requests[0]?.headers ?? {};
  assert.match(
    headers.authorization ?? "",
    new RegExp(
      `^AWS4-HMAC-SHA256 Credential=${MOCK_AWS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, ` +
        "SignedHeaders=[^ ]*host;",
    ),
  );
  assert.is(headers["x-amz-security-token"], undefined);
  assert.is(mock.requests[0]?.path, "/bedrock/model/anthropic.claude-mock-v1%3A0/converse");

  // An ARN holds `/` as well: still one path segment, still signed right.
  const arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-mock-v1:0";
  await bedrockChat.chat(bedrock(mock, { ...MOCK_AWS }, arn), hi, signal());
  assert.is(mock.requests[1]?.model, arn);
  const stream = await collect(await bedrockChat.chatStream(target, hi, signal()));
  assert.is(contentOf(stream), `Hello from ${MODEL}`);
});

test("SigV4: a wrong secret or region is refused, and the secret never appears in the error", async ({ mock }) => {
  const wrong = await failure(
    bedrockChat.chat(bedrock(mock, { ...MOCK_AWS, secretAccessKey: "wrong-secret-0123456789" }), hi, signal()),
  );
  assert.equal([wrong.failure, wrong.options.status], ["status", 403]);
  assert.match(wrong.message, "signature");
  assert.not.match(wrong.message, "wrong-secret");
  const region = await failure(bedrockChat.chat(bedrock(mock, { ...MOCK_AWS, region: "eu-west-1" }), hi, signal()));
  assert.is(region.options.status, 403);
});

test("SigV4: a session token is sent and signed", async ({ mock }) => {
  await bedrockChat.chat(bedrock(mock, { ...MOCK_AWS_SESSION }), hi, signal());
  const headers = mock.requests[0]?.headers ?? {};
  assert.is(headers["x-amz-security-token"], MOCK_AWS_SESSION.sessionToken);
  assert.match(headers.authorization ?? "", "x-amz-security-token");
  const { sessionToken: _token, ...withoutToken } = MOCK_AWS_SESSION;
  const without = await failure(bedrockChat.chat(bedrock(mock, withoutToken), hi, signal()));
  assert.is(without.options.status, 403);
});

test("bearer: a Bedrock API key is sent as is; a wrong one is refused without showing it", async ({ mock }) => {
  await bedrockChat.chat(bedrock(mock), hi, signal());
  assert.is(mock.requests[0]?.headers.authorization, `Bearer ${mock.apiKey}`);
  const wrong = await failure(bedrockChat.chat({ ...bedrock(mock), apiKey: "ABSKwrong-key-0123456789" }, hi, signal()));
  assert.is(wrong.options.status, 403);
  assert.not.match(wrong.message, "0123456789");
});

test("chat: text, finish reasons, usage with cache reads and writes counted into prompt tokens", async ({ mock }) => {
  const result = await bedrockChat.chat(
    bedrock(mock),
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
  assert.is(result.body.id, "chatcmpl-mock-request-1");
  const choice = choiceOf(result.body);
  assert.equal(choice.message, { role: "assistant", content: `Hello from ${MODEL}` });
  assert.equal([choice.finish_reason, choice.native_finish_reason], ["stop", "end_turn"]);
  assert.equal(result.usage, {
    promptTokens: 8,
    completionTokens: 3,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });

  const cut = await bedrockChat.chat(bedrock(mock), { ...hi, max_tokens: 1 }, signal());
  assert.equal([choiceOf(cut.body).finish_reason, choiceOf(cut.body).native_finish_reason], ["length", "max_tokens"]);

  mock.rule({ usage: { prompt_tokens: 240, completion_tokens: 5, cached_tokens: 200, cache_write_tokens: 30 } });
  const cached = await bedrockChat.chat(bedrock(mock), hi, signal());
  assert.equal(cached.usage, {
    promptTokens: 240,
    completionTokens: 5,
    reasoningTokens: 0,
    cachedTokens: 200,
    cacheWriteTokens: 30,
  });
  assert.equal(cached.body.usage, {
    prompt_tokens: 240,
    completion_tokens: 5,
    total_tokens: 245,
    prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 30 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
});

test("chat: stop reasons of filters; toolUse becomes tool_calls; reasoningContent becomes reasoning", async ({
  mock,
}) => {
  for (const [stopReason, finish] of [
    ["guardrail_intervened", "content_filter"],
    ["content_filtered", "content_filter"],
    ["stop_sequence", "stop"],
  ]) {
    mock.rule({
      rawBody: JSON.stringify({
        output: { message: { role: "assistant", content: [{ text: "x" }] } },
        stopReason,
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      }),
      times: 1,
    });
    const result = await bedrockChat.chat(bedrock(mock), hi, signal());
    assert.is(choiceOf(result.body).finish_reason, finish, stopReason);
  }
  mock.rule({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' }, reasoning: "Need the weather tool." });
  const result = await bedrockChat.chat(
    bedrock(mock),
    { ...hi, tools: [{ type: "function", function: { name: "get_weather" } }] },
    signal(),
  );
  const choice = choiceOf(result.body);
  assert.equal([choice.finish_reason, choice.native_finish_reason], ["tool_calls", "tool_use"]);
  assert.equal(choice.message, {
    role: "assistant",
    content: null,
    reasoning: "Need the weather tool.",
    tool_calls: [
      {
        id: "tooluse_mock_4",
        index: 0,
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
      },
    ],
  });
});

test("chatStream: role first, text joins, finish, then usage from the metadata event", async ({ mock }) => {
  const stream = await bedrockChat.chatStream(
    bedrock(mock),
    { messages: [{ role: "user", content: "Say hello to everyone" }] },
    signal(),
  );
  assert.match(mock.requests[0]?.path ?? "", /\/converse-stream$/);
  const chunks = await collect(stream);
  assert.ok(
    chunks.every(
      (chunk) =>
        chunk.object === "chat.completion.chunk" && chunk.id === "chatcmpl-mock-request-1" && chunk.model === MODEL,
    ),
  );
  assert.equal(deltas(chunks)[0], { role: "assistant", content: "" });
  assert.is(contentOf(chunks), `Hello from ${MODEL}`);
  assert.equal(finishReasons(chunks), ["stop"]);
  assert.equal(stream.usage(), {
    promptTokens: 6,
    completionTokens: 3,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
  });
  const last = chunks[chunks.length - 1];
  assert.equal(last?.choices, []);
  assert.is((last?.usage as JsonObject | undefined)?.total_tokens, 9);
});

test("chatStream: tool use streams as tool call fragments; reasoning as reasoning deltas", async ({ mock }) => {
  mock.rule({
    reply: "Let me check.",
    toolCall: { name: "lookup", arguments: '{"q":"weather in Paris"}' },
    reasoning: "Think first.",
  });
  const chunks = await collect(
    await bedrockChat.chatStream(
      bedrock(mock),
      { ...hi, tools: [{ type: "function", function: { name: "lookup" } }] },
      signal(),
    ),
  );
  const all = deltas(chunks);
  assert.is(all.map((d) => (typeof d.reasoning === "string" ? d.reasoning : "")).join(""), "Think first.");
  assert.is(contentOf(chunks), "Let me check.");
  const calls = all.flatMap((d) => (Array.isArray(d.tool_calls) ? d.tool_calls : [])) as Array<Record<string, unknown>>;
  assert.equal(calls[0], {
    index: 0,
    id: "tooluse_mock_1",
    type: "function",
    function: { name: "lookup", arguments: "" },
  });
  assert.ok(calls.length >= 3, "the arguments arrive in fragments");
  assert.ok(calls.slice(1).every((c) => c.index === 0 && c.id === undefined));
  assert.is(calls.map((c) => (c.function as JsonObject).arguments).join(""), '{"q":"weather in Paris"}');
  assert.equal(finishReasons(chunks), ["tool_calls"]);
});

test("chatStream: a body cut midway, or ended cleanly before messageStop, is cut", async ({ mock }) => {
  mock.rule({ cutAfterChunks: 3, times: 1 });
  const cut = await collectUntilFailure(await bedrockChat.chatStream(bedrock(mock), hi, signal()));
  assert.is(cut.error.failure, "cut");
  assert.ok(cut.chunks.length >= 1, "the chunks before the cut were delivered");

  mock.rule({ endAfterChunks: 3, times: 1 });
  const ended = await collectUntilFailure(await bedrockChat.chatStream(bedrock(mock), hi, signal()));
  assert.is(ended.error.failure, "cut");
  assert.ok(ended.chunks.length >= 1);
});

test("chatStream: an exception frame fails the stream with its status and message", async ({ mock }) => {
  mock.rule({
    streamError: { afterChunks: 2, type: "throttlingException", message: "Too many tokens, please wait" },
    times: 1,
  });
  const throttled = await collectUntilFailure(await bedrockChat.chatStream(bedrock(mock), hi, signal()));
  assert.ok(throttled.chunks.length >= 1);
  assert.equal(
    [throttled.error.failure, throttled.error.options.status, throttled.error.message],
    ["status", 429, "Too many tokens, please wait"],
  );

  mock.rule({ streamError: { afterChunks: 1, type: "modelStreamErrorException" }, times: 1 });
  const model = await collectUntilFailure(await bedrockChat.chatStream(bedrock(mock), hi, signal()));
  assert.is(model.error.options.status, 424);
});

test(
  "errors: Bedrock's message and status (429 throttling with Retry-After, 400 validation); " +
    "a JSON answer to a stream is protocol",
  async ({ mock }) => {
    mock.rule({ status: 429, retryAfter: 7, times: 1 });
    const throttled = await failure(bedrockChat.chat(bedrock(mock, { ...MOCK_AWS }), hi, signal()));
    assert.equal(
      [throttled.failure, throttled.options.status, throttled.options.retryAfterS, throttled.message],
      ["status", 429, 7, "mock upstream failure 429"],
    );

    mock.rule({
      rawBody: JSON.stringify({ message: `The model rejected the request signed with ${MOCK_AWS.secretAccessKey}` }),
      status: 400,
      times: 1,
    });
    const invalid = await failure(bedrockChat.chatStream(bedrock(mock, { ...MOCK_AWS }), hi, signal()));
    assert.equal([invalid.failure, invalid.options.status], ["status", 400]);
    assert.match(invalid.message, "The model rejected the request");
    assert.not.match(invalid.message, MOCK_AWS.secretAccessKey);

    mock.rule({ rawBody: JSON.stringify({ output: {} }) });
    assert.is((await failure(bedrockChat.chatStream(bedrock(mock), hi, signal()))).failure, "protocol");
    assert.is((await failure(bedrockChat.chat(bedrock(mock), hi, signal()))).failure, "protocol");
  },
);

test.run();
