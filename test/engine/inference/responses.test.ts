import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import OpenAI from "openai";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { assertOneSuccessRow } from "../../support/ledger-rows.js";
import { sseEvents, typedStreamEvents, typesOf } from "../../support/sse.js";

/**
 * POST /api/v1/responses: the OpenAI Responses API served by the chat pipeline, against
 * OpenAI-format and Anthropic-format upstreams, streamed and not, with tool calls, ledger rows,
 * 400s naming the client's own fields, and the official SDK.
 */
const test = suite<{ env: InferenceGateway }>("responses api");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const ANTHROPIC = { only: ["mockanthropic"] };
const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "Weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const WEATHER_CALL = { name: "get_weather", arguments: '{"city":"Paris"}' };

function post(env: InferenceGateway, body: unknown): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/responses", { key: env.gw.key, body });
}

function lastUpstreamBody(env: InferenceGateway): unknown {
  return env.upstream.requests[env.upstream.requests.length - 1]?.body;
}

/** The stream's events, checked as a named-event stream and numbered in order. */
function streamEvents(res: Reply): Array<Record<string, unknown>> {
  const events = typedStreamEvents(res);
  events.forEach((e, index) => assert.is(e.sequence_number, index));
  return events;
}

const deltasOf = (events: Array<Record<string, unknown>>, type: string) =>
  events
    .filter((e) => e.type === type)
    .map((e) => e.delta)
    .join("");

function assertLedger(
  env: InferenceGateway,
  id: string,
  streamed: boolean,
  promptTokens: number,
  completionTokens: number,
): Promise<void> {
  return assertOneSuccessRow(env.gw, id, { streamed, promptTokens, completionTokens });
}

test("non-streamed, OpenAI upstream: a response object with the text, usage and a ledger row", async ({ env }) => {
  const res = await post(env, { model: "mock/chat", input: "Hi there", metadata: { ticket: "1" }, store: false });
  assert.is(res.status, 200, res.text);
  const body = res.body as Record<string, unknown>;
  assert.is(body.object, "response");
  assert.is(body.status, "completed");
  assert.is(body.model, "mock/chat");
  assert.match(String(body.id), /^gen-/);
  assert.type(body.created_at, "number");
  assert.is(body.output_text, undefined, "output_text is an SDK convenience, not wire format");
  assert.equal(at(body, "output", 0, "content"), [{ type: "output_text", text: "Hello from chat-a", annotations: [] }]);
  assert.is(at(body, "output", 0, "role"), "assistant");
  assert.is(at(body, "usage", "input_tokens"), 2);
  assert.is(at(body, "usage", "output_tokens"), 3);
  assert.is(at(body, "usage", "total_tokens"), 5);
  assert.is(at(body, "usage", "input_tokens_details", "cached_tokens"), 0);
  assert.is(at(body, "usage", "output_tokens_details", "reasoning_tokens"), 0);
  assert.equal(at(lastUpstreamBody(env), "messages"), [{ role: "user", content: "Hi there" }]);
  // Chat has both under the same names: they reach the provider as sent.
  assert.equal(at(lastUpstreamBody(env), "metadata"), { ticket: "1" });
  assert.is(at(lastUpstreamBody(env), "store"), false);
  await assertLedger(env, String(body.id), false, 2, 3);
});

test("non-streamed, Anthropic upstream: instructions become the system prompt", async ({ env }) => {
  const res = await post(env, {
    model: "mock/chat",
    instructions: "Be brief",
    input: [{ role: "user", content: [{ type: "input_text", text: "Hi there" }] }],
    provider: ANTHROPIC,
  });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "output", 0, "content", 0, "text"), "Hello from claude-x");
  const sent = env.upstream.requests[0]!;
  assert.is(sent.path, "/anthropic/v1/messages");
  assert.equal(at(sent.body, "system"), [{ type: "text", text: "Be brief" }]);
  assert.equal(at(sent.body, "messages"), [{ role: "user", content: [{ type: "text", text: "Hi there" }] }]);
  await assertLedger(env, String(at(res.body, "id")), false, 4, 3);
});

test("max_output_tokens cuts the answer: status incomplete with its reason", async ({ env }) => {
  const res = await post(env, { model: "mock/chat", input: "Hi there", max_output_tokens: 1 });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "status"), "incomplete");
  assert.equal(at(res.body, "incomplete_details"), { reason: "max_output_tokens" });
  assert.is(at(lastUpstreamBody(env), "max_completion_tokens"), 1);
});

test("streamed, OpenAI upstream: the Responses event sequence, text deltas, usage on response.completed", async ({
  env,
}) => {
  const events = streamEvents(await post(env, { model: "mock/chat", input: "Hi there", stream: true }));
  const types = typesOf(events);
  assert.equal(types.slice(0, 4), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
  ]);
  assert.equal(types.slice(-4), [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.is(deltasOf(events, "response.output_text.delta"), "Hello from chat-a");
  const completed = events.at(-1)!;
  assert.is(at(completed, "response", "status"), "completed");
  assert.is(at(completed, "response", "output", 0, "content", 0, "text"), "Hello from chat-a");
  assert.is(at(completed, "response", "usage", "output_tokens"), 3);
  assert.is(at(events[0], "response", "status"), "in_progress");
  await assertLedger(env, String(at(completed, "response", "id")), true, 2, 3);
});

test("streamed, Anthropic upstream", async ({ env }) => {
  const events = streamEvents(await post(env, { model: "mock/claude", input: "Hi there", stream: true }));
  assert.is(deltasOf(events, "response.output_text.delta"), "Hello from claude-only");
  assert.is(env.upstream.requests[0]!.path, "/anthropic/v1/messages");
  assert.is(events.at(-1)!.type, "response.completed");
});

test("tool calls round trip: function_call out, function_call and function_call_output back in", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", toolCall: WEATHER_CALL, times: 1 });
  const ask = { role: "user", content: "Weather in Paris?" };
  const res = await post(env, { model: "mock/chat", input: [ask], tools: [WEATHER_TOOL], tool_choice: "auto" });
  assert.is(res.status, 200, res.text);
  const output = at(res.body, "output") as Array<Record<string, unknown>>;
  assert.is(output.length, 1);
  const fc = output[0]!;
  assert.is(fc.type, "function_call");
  assert.is(fc.call_id, "call_mock_1");
  assert.is(fc.name, "get_weather");
  assert.is(fc.arguments, WEATHER_CALL.arguments);
  assert.equal(at(lastUpstreamBody(env), "tools"), [
    {
      type: "function",
      function: { name: "get_weather", description: "Weather of a city", parameters: WEATHER_TOOL.parameters },
    },
  ]);

  const followUp = await post(env, {
    model: "mock/chat",
    tools: [WEATHER_TOOL],
    input: [ask, fc, { type: "function_call_output", call_id: "call_mock_1", output: "sunny" }],
  });
  assert.is(followUp.status, 200, followUp.text);
  assert.is(at(followUp.body, "output", 0, "content", 0, "text"), "Hello from chat-a");
  assert.equal(at(lastUpstreamBody(env), "messages"), [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", tool_calls: [{ id: "call_mock_1", type: "function", function: WEATHER_CALL }] },
    { role: "tool", tool_call_id: "call_mock_1", content: "sunny" },
  ]);
});

test("streamed tool calls: output item added, argument deltas, done", async ({ env }) => {
  env.upstream.rule({ model: "claude-x", toolCall: WEATHER_CALL, times: 1 });
  const events = streamEvents(
    await post(env, {
      model: "mock/chat",
      input: "Weather?",
      tools: [WEATHER_TOOL],
      stream: true,
      provider: ANTHROPIC,
    }),
  );
  const added = events.find(
    (e) => e.type === "response.output_item.added" && at(e, "item", "type") === "function_call",
  );
  assert.ok(added, JSON.stringify(typesOf(events)));
  assert.is(at(added, "item", "call_id"), "toolu_mock_1");
  assert.is(at(added, "item", "name"), "get_weather");
  assert.equal(JSON.parse(deltasOf(events, "response.function_call_arguments.delta")), { city: "Paris" });
  const done = events.find((e) => e.type === "response.function_call_arguments.done");
  assert.equal(JSON.parse(String(at(done, "arguments"))), { city: "Paris" });
  const completed = events.at(-1)!;
  assert.is(completed.type, "response.completed");
  const calls = (at(completed, "response", "output") as Array<Record<string, unknown>>).filter(
    (item) => item.type === "function_call",
  );
  assert.is(calls.length, 1);
  assert.is(calls[0]!.status, "completed");
});

test("a stream cut by the provider ends with a named error event", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", cutAfterChunks: 2, times: 1 });
  const res = await post(env, { model: "mock/chat", input: "Hi there", stream: true, provider: { only: ["mockai"] } });
  assert.is(res.status, 200, res.text);
  const events = sseEvents(res.text);
  const last = events.at(-1)!;
  assert.is(last.event, "error");
  assert.type(at(last.data, "error", "message"), "string");
  assert.not.ok(events.some((e) => e.event === "response.completed"));
});

test("bad input → 400 naming the field", async ({ env }) => {
  const cases: Array<[unknown, RegExp]> = [
    [{ model: "mock/chat" }, /^input is required/],
    [[1, 2], /request body must be a JSON object/],
    [{ model: "mock/chat", input: 5 }, /^input must be/],
    [{ model: "mock/chat", input: [{ type: "item_reference", id: "msg_1" }] }, /^input\[0\]\.type/],
    [
      { model: "mock/chat", input: [{ role: "user", content: [{ type: "input_audio" }] }] },
      /^input\[0\]\.content\[0\]\.type/,
    ],
    [
      { model: "mock/chat", input: [{ type: "function_call_output", output: "x" }] },
      /^input\[0\]\.call_id is required/,
    ],
    [{ model: "mock/chat", input: "Hi", tools: [{ type: "web_search_preview" }] }, /^tools\[0\]\.type/],
    [{ model: "mock/chat", input: "Hi", temperature: "hot" }, /^temperature must be a number/],
    [{ model: "mock/chat", input: "Hi", temperature: 5 }, /temperature/],
    [{ model: "mock/chat", input: "Hi", previous_response_id: "resp_1" }, /^previous_response_id/],
    [
      { model: "mock/chat", input: "Hi", text: { format: { type: "json_schema", name: "x" } } },
      /^text\.format\.schema is required/,
    ],
  ];
  for (const [body, message] of cases) {
    const res = await post(env, body);
    assert.is(res.status, 400, `${JSON.stringify(body)} → ${res.text}`);
    assert.match(String(at(res.body, "error", "message")), message);
  }
  assert.is(env.upstream.requests.length, 0);
});

test("the official openai SDK: responses.create, streamed and not", async ({ env }) => {
  const client = new OpenAI({ apiKey: env.gw.key, baseURL: `${env.gw.url}/api/v1`, maxRetries: 0 });
  const res = await client.responses.create({ model: "mock/chat", input: "Hi there" });
  assert.is(res.output_text, "Hello from chat-a");
  assert.is(res.usage?.output_tokens, 3);

  const stream = await client.responses.create({ model: "mock/chat", input: "Hi there", stream: true });
  let text = "";
  let final: OpenAI.Responses.Response | undefined;
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
    if (event.type === "response.completed") final = event.response;
  }
  assert.is(text, "Hello from chat-a");
  assert.is(final?.status, "completed");

  const helper = client.responses.stream({ model: "mock/chat", input: "Hi there" });
  const done = await helper.finalResponse();
  assert.is(done.status, "completed");
  const message = done.output[0];
  assert.ok(message?.type === "message", JSON.stringify(done.output));
  assert.equal(
    message.content.map((part) => (part.type === "output_text" ? part.text : part.type)),
    ["Hello from chat-a"],
  );
});

test.run();
