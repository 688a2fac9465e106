import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { assertOneSuccessRow, ledgerRowsOf } from "../../support/ledger-rows.js";
import { typedStreamEvents, typesOf } from "../../support/sse.js";

/**
 * POST /api/v1/messages: the Anthropic Messages API served by the chat pipeline, against
 * OpenAI-format and Anthropic-format upstreams, streamed and not, with tool use, ledger rows and
 * 400s naming the client's own fields. The Anthropic SDK is not a dependency; the framing it
 * relies on (event names, no [DONE]) is asserted on the raw stream.
 */
const test = suite<{ env: InferenceGateway }>("messages api");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const OPENAI = { only: ["mockai"] };
const HELLO = [{ role: "user", content: "Hi there" }];
const WEATHER_TOOL = {
  name: "get_weather",
  description: "Weather of a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const WEATHER_CALL = { name: "get_weather", arguments: '{"city":"Paris"}' };

function post(env: InferenceGateway, body: unknown): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/messages", { key: env.gw.key, body });
}

function lastUpstreamBody(env: InferenceGateway): unknown {
  return env.upstream.requests[env.upstream.requests.length - 1]?.body;
}

const streamEvents = typedStreamEvents;

function assertLedger(
  env: InferenceGateway,
  id: string,
  streamed: boolean,
  promptTokens: number,
  completionTokens: number,
): Promise<void> {
  return assertOneSuccessRow(env.gw, id, { streamed, promptTokens, completionTokens });
}

test("non-streamed, OpenAI upstream: a message object with text, stop_reason, usage and a ledger row", async ({
  env,
}) => {
  const res = await post(env, {
    model: "mock/chat",
    max_tokens: 100,
    messages: HELLO,
    top_k: 5,
    metadata: { user_id: "user-7" },
    provider: OPENAI,
  });
  assert.is(res.status, 200, res.text);
  const body = res.body as Record<string, unknown>;
  assert.is(body.type, "message");
  assert.is(body.role, "assistant");
  assert.is(body.model, "mock/chat");
  assert.match(String(body.id), /^gen-/);
  assert.equal(body.content, [{ type: "text", text: "Hello from chat-a" }]);
  assert.is(body.stop_reason, "end_turn");
  assert.is(body.stop_sequence, null);
  assert.is(at(body, "usage", "input_tokens"), 2);
  assert.is(at(body, "usage", "output_tokens"), 3);
  assert.is(at(body, "usage", "cache_read_input_tokens"), 0);
  const sent = lastUpstreamBody(env);
  assert.equal(at(sent, "messages"), HELLO);
  assert.is(at(sent, "max_tokens"), 100);
  assert.is(at(sent, "top_k"), 5, "top_k is the gateway's chat top_k");
  await assertLedger(env, String(body.id), false, 2, 3);
  const rows = await ledgerRowsOf(env.gw, String(body.id));
  assert.is(rows[0]!.end_user, "user-7", "metadata.user_id is the end user");
});

test("non-streamed, Anthropic upstream: system, stop_sequences and a base64 image reach Anthropic intact", async ({
  env,
}) => {
  const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
  const res = await post(env, {
    model: "mock/claude",
    max_tokens: 100,
    system: [{ type: "text", text: "Be brief" }],
    stop_sequences: ["END"],
    messages: [{ role: "user", content: [{ type: "text", text: "Hi there" }, image] }],
  });
  assert.is(res.status, 200, res.text);
  assert.equal(at(res.body, "content"), [{ type: "text", text: "Hello from claude-only" }]);
  assert.is(at(res.body, "stop_reason"), "end_turn");
  const sent = env.upstream.requests[0]!;
  assert.is(sent.path, "/anthropic/v1/messages");
  assert.equal(at(sent.body, "system"), [{ type: "text", text: "Be brief" }]);
  assert.equal(at(sent.body, "stop_sequences"), ["END"]);
  assert.equal(at(sent.body, "messages", 0, "content"), [{ type: "text", text: "Hi there" }, image]);
  await assertLedger(env, String(at(res.body, "id")), false, 4, 3);
});

test("max_tokens cuts the answer: stop_reason max_tokens", async ({ env }) => {
  const res = await post(env, { model: "mock/chat", max_tokens: 1, messages: HELLO, provider: OPENAI });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "stop_reason"), "max_tokens");
});

test("streamed, OpenAI upstream: the Messages event sequence with usage on message_delta", async ({ env }) => {
  const events = streamEvents(
    await post(env, { model: "mock/chat", max_tokens: 100, messages: HELLO, stream: true, provider: OPENAI }),
  );
  const types = typesOf(events);
  assert.equal(types.slice(0, 2), ["message_start", "content_block_start"]);
  assert.equal(types.slice(-3), ["content_block_stop", "message_delta", "message_stop"]);
  assert.equal(at(events[1], "content_block"), { type: "text", text: "" });
  const text = events
    .filter((e) => e.type === "content_block_delta")
    .map((e) => at(e, "delta", "text"))
    .join("");
  assert.is(text, "Hello from chat-a");
  const delta = events.at(-2)!;
  assert.is(at(delta, "delta", "stop_reason"), "end_turn");
  assert.is(at(delta, "usage", "output_tokens"), 3);
  assert.is(at(delta, "usage", "input_tokens"), 2);
  await assertLedger(env, String(at(events[0], "message", "id")), true, 2, 3);
});

test("streamed, Anthropic upstream", async ({ env }) => {
  const events = streamEvents(
    await post(env, { model: "mock/claude", max_tokens: 100, messages: HELLO, stream: true }),
  );
  const text = events
    .filter((e) => e.type === "content_block_delta")
    .map((e) => at(e, "delta", "text"))
    .join("");
  assert.is(text, "Hello from claude-only");
  assert.is(events.at(-1)!.type, "message_stop");
});

test("tool use round trip: tool_use out, tool_use and tool_result back in", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", toolCall: WEATHER_CALL, times: 1 });
  const ask = { role: "user", content: "Weather in Paris?" };
  const res = await post(env, {
    model: "mock/chat",
    max_tokens: 100,
    messages: [ask],
    tools: [WEATHER_TOOL],
    tool_choice: { type: "any" },
    provider: OPENAI,
  });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "stop_reason"), "tool_use");
  const toolUse = { type: "tool_use", id: "call_mock_1", name: "get_weather", input: { city: "Paris" } };
  assert.equal(at(res.body, "content"), [toolUse]);
  const sent = lastUpstreamBody(env);
  assert.equal(at(sent, "tools"), [
    {
      type: "function",
      function: { name: "get_weather", parameters: WEATHER_TOOL.input_schema, description: "Weather of a city" },
    },
  ]);
  assert.is(at(sent, "tool_choice"), "required");

  const followUp = await post(env, {
    model: "mock/chat",
    max_tokens: 100,
    tools: [WEATHER_TOOL],
    messages: [
      ask,
      { role: "assistant", content: [toolUse] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_mock_1", content: "sunny" }] },
    ],
    provider: OPENAI,
  });
  assert.is(followUp.status, 200, followUp.text);
  assert.equal(at(followUp.body, "content"), [{ type: "text", text: "Hello from chat-a" }]);
  assert.equal(at(lastUpstreamBody(env), "messages"), [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", tool_calls: [{ id: "call_mock_1", type: "function", function: WEATHER_CALL }] },
    { role: "tool", tool_call_id: "call_mock_1", content: "sunny" },
  ]);
});

test("streamed tool use: a tool_use block with input_json_delta fragments", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", toolCall: WEATHER_CALL, times: 1 });
  const events = streamEvents(
    await post(env, {
      model: "mock/chat",
      max_tokens: 100,
      messages: HELLO,
      tools: [WEATHER_TOOL],
      stream: true,
      provider: OPENAI,
    }),
  );
  const start = events.find((e) => e.type === "content_block_start" && at(e, "content_block", "type") === "tool_use");
  assert.ok(start, JSON.stringify(typesOf(events)));
  assert.equal(at(start, "content_block"), { type: "tool_use", id: "call_mock_1", name: "get_weather", input: {} });
  const json = events
    .filter((e) => at(e, "delta", "type") === "input_json_delta" && e.index === start.index)
    .map((e) => at(e, "delta", "partial_json"))
    .join("");
  assert.equal(JSON.parse(json), { city: "Paris" });
  assert.is(at(events.at(-2), "delta", "stop_reason"), "tool_use");
  // Every started block is stopped, once.
  const started = events.filter((e) => e.type === "content_block_start").map((e) => e.index);
  const stopped = events.filter((e) => e.type === "content_block_stop").map((e) => e.index);
  assert.equal(stopped, started);
});

test("bad input → 400 naming the field", async ({ env }) => {
  const cases: Array<[unknown, RegExp]> = [
    [{ model: "mock/chat", messages: HELLO }, /^max_tokens is required/],
    [{ model: "mock/chat", max_tokens: 0, messages: HELLO }, /^max_tokens must be/],
    [{ model: "mock/chat", max_tokens: 10 }, /^messages is required/],
    [{ model: "mock/chat", max_tokens: 10, messages: [{ role: "system", content: "x" }] }, /^messages\[0\]\.role/],
    [
      { model: "mock/chat", max_tokens: 10, messages: [{ role: "user", content: [{ type: "video" }] }] },
      /^messages\[0\]\.content\[0\]\.type/,
    ],
    [
      {
        model: "mock/chat",
        max_tokens: 10,
        messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }],
      },
      /^messages\[0\]\.content\[0\]\.source\.type/,
    ],
    [
      {
        model: "mock/chat",
        max_tokens: 10,
        messages: HELLO,
        tools: [{ type: "web_search_20250305", name: "web_search" }],
      },
      /^tools\[0\]\.type/,
    ],
    [
      { model: "mock/chat", max_tokens: 10, messages: HELLO, tools: [{ name: "f" }] },
      /^tools\[0\]\.input_schema is required/,
    ],
    [{ model: "mock/chat", max_tokens: 10, messages: HELLO, tool_choice: { type: "maybe" } }, /^tool_choice\.type/],
    [{ model: "mock/chat", max_tokens: 10, messages: HELLO, system: 3 }, /^system must be a string or an array/],
  ];
  for (const [body, message] of cases) {
    const res = await post(env, body);
    assert.is(res.status, 400, `${JSON.stringify(body)} → ${res.text}`);
    assert.match(String(at(res.body, "error", "message")), message);
  }
  assert.is(env.upstream.requests.length, 0);
});

test.run();
