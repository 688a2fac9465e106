import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import OpenAI from "openai";
import { at } from "../../support/http.js";
import { PRICES, startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { mockVector } from "../../upstream/mock-upstream.js";

/**
 * The official `openai` SDK, unchanged but for its base URL, against the gateway: chat, streamed
 * chat, tool calls, logprobs, the Anthropic endpoint behind the same wire format, embeddings.
 */
const test = suite<{ env: InferenceGateway; client: OpenAI }>("openai sdk");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
  ctx.client = new OpenAI({ apiKey: ctx.env.gw.key, baseURL: `${ctx.env.gw.url}/api/v1`, maxRetries: 0 });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

type Params = OpenAI.ChatCompletionCreateParamsNonStreaming;
type StreamParams = OpenAI.ChatCompletionCreateParamsStreaming;
/** Gateway fields the SDK's types do not know; the SDK sends every param as body. */
type Routed<T> = T & { provider: { only: string[] } };

const HELLO: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Hi there" }];
/** What the mock counts for HELLO: ceil(8 characters / 4). */
const HELLO_PROMPT_TOKENS = 2;
const ANTHROPIC = { only: ["mockanthropic"] };
const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const WEATHER_CALL = { name: "get_weather", arguments: '{"city":"Paris"}' };

/** price × tokens as an exact decimal string, computed on integers (12 decimals cover every test price). */
function exactCost(
  prices: { prompt: string; completion: string },
  promptTokens: number,
  completionTokens: number,
): string {
  const SCALE = 12;
  const units = (decimal: string) => {
    const [whole = "0", fraction = ""] = decimal.split(".");
    return BigInt(whole + fraction.padEnd(SCALE, "0"));
  };
  const total = (units(prices.prompt) * BigInt(promptTokens) + units(prices.completion) * BigInt(completionTokens))
    .toString()
    .padStart(SCALE + 1, "0");
  const text = `${total.slice(0, -SCALE)}.${total.slice(-SCALE)}`.replace(/\.?0+$/, "");
  return text === "" ? "0" : text;
}

/** The gateway's `usage.cost` and the ledger's cost both equal price × tokens. */
async function assertCost(
  env: InferenceGateway,
  generationId: string,
  usage: unknown,
  prices: { prompt: string; completion: string },
  promptTokens: number,
  completionTokens: number,
): Promise<void> {
  assert.is(at(usage, "prompt_tokens"), promptTokens);
  assert.is(at(usage, "completion_tokens"), completionTokens);
  assert.is(at(usage, "total_tokens"), promptTokens + completionTokens);
  const expected = exactCost(prices, promptTokens, completionTokens);
  assert.is(at(usage, "cost"), Number(expected));
  const rows = await ledgerRowsOf(env.gw, generationId);
  assert.is(rows.length, 1);
  assert.is(rows[0]!.status, "success");
  assert.is(Number(rows[0]!.cost_usd), Number(expected), `ledger cost ${rows[0]!.cost_usd} vs ${expected}`);
}

interface Assembled {
  text: string;
  chunks: OpenAI.ChatCompletionChunk[];
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
}

async function assemble(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<Assembled> {
  const out: Assembled = { text: "", chunks: [], toolCalls: [], finishReason: null };
  for await (const chunk of stream) {
    out.chunks.push(chunk);
    const choice = chunk.choices[0];
    if (!choice) continue;
    out.text += choice.delta.content ?? "";
    out.finishReason = choice.finish_reason ?? out.finishReason;
    for (const delta of choice.delta.tool_calls ?? []) {
      const call = (out.toolCalls[delta.index] ??= { id: "", name: "", arguments: "" });
      call.id += delta.id ?? "";
      call.name += delta.function?.name ?? "";
      call.arguments += delta.function?.arguments ?? "";
    }
  }
  return out;
}

function lastRequestBody(env: InferenceGateway): Record<string, unknown> {
  const last = env.upstream.requests[env.upstream.requests.length - 1];
  assert.ok(last, "the mock received no request");
  return last.body as Record<string, unknown>;
}

test("chat: content, a gen- id, the catalog model and usage costed at the endpoint's prices", async ({
  env,
  client,
}) => {
  const res = await client.chat.completions.create({ model: "mock/chat", messages: HELLO });
  assert.is(res.choices[0]!.message.content, "Hello from chat-a");
  assert.is(res.choices[0]!.finish_reason, "stop");
  assert.match(res.id, /^gen-/);
  assert.is(res.model, "mock/chat");
  assert.is(res.object, "chat.completion");
  assert.is(env.upstream.requests.length, 1);
  assert.is(env.upstream.requests[0]!.model, "chat-a");
  await assertCost(env, res.id, res.usage, PRICES["chat-a"], HELLO_PROMPT_TOKENS, 3);
});

test("streamed chat: the text reassembles and the final chunk carries usage with its cost", async ({ env, client }) => {
  const stream = await client.chat.completions.create({ model: "mock/chat", messages: HELLO, stream: true });
  const { text, chunks, finishReason } = await assemble(stream);
  assert.is(text, "Hello from chat-a");
  assert.is(finishReason, "stop");
  const ids = new Set(chunks.map((c) => c.id));
  assert.is(ids.size, 1, "every chunk carries the one generation id");
  const id = chunks[0]!.id;
  assert.match(id, /^gen-/);
  assert.ok(chunks.every((c) => c.model === "mock/chat"));
  const last = chunks[chunks.length - 1]!;
  assert.ok(last.usage, "the final chunk has usage");
  assert.equal(last.choices, []);
  await assertCost(env, id, last.usage, PRICES["chat-a"], HELLO_PROMPT_TOKENS, 3);
});

test("tool calls: the call comes back as message.tool_calls, and the tool result reaches the provider", async ({
  env,
  client,
}) => {
  env.upstream.rule({ model: "chat-a", toolCall: WEATHER_CALL, times: 1 });
  const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
  const res = await client.chat.completions.create({ model: "mock/chat", messages: ask, tools: [WEATHER_TOOL] });
  const choice = res.choices[0]!;
  assert.is(choice.finish_reason, "tool_calls");
  const calls = choice.message.tool_calls ?? [];
  assert.is(calls.length, 1);
  const toolCall = calls[0]!;
  assert.is(toolCall.type, "function");
  assert.ok(toolCall.type === "function");
  assert.is(toolCall.id, "call_mock_1");
  assert.equal(toolCall.function, WEATHER_CALL);
  assert.equal((lastRequestBody(env).tools as unknown[])[0], WEATHER_TOOL);

  const followUp = await client.chat.completions.create({
    model: "mock/chat",
    tools: [WEATHER_TOOL],
    messages: [...ask, choice.message, { role: "tool", tool_call_id: toolCall.id, content: "sunny, 21 °C" }],
  });
  assert.is(followUp.choices[0]!.message.content, "Hello from chat-a");
  const messages = lastRequestBody(env).messages as Array<Record<string, unknown>>;
  assert.is(messages.length, 3);
  assert.is(messages[1]!.role, "assistant");
  assert.equal(at(messages[1], "tool_calls", 0, "id"), "call_mock_1");
  assert.equal(at(messages[1], "tool_calls", 0, "function"), WEATHER_CALL);
  assert.equal(messages[2], { role: "tool", tool_call_id: "call_mock_1", content: "sunny, 21 °C" });
});

test("streamed tool calls reassemble from their deltas", async ({ env, client }) => {
  env.upstream.rule({ model: "chat-a", toolCall: WEATHER_CALL, times: 1 });
  const stream = await client.chat.completions.create({
    model: "mock/chat",
    messages: HELLO,
    tools: [WEATHER_TOOL],
    stream: true,
  });
  const { toolCalls, finishReason } = await assemble(stream);
  assert.is(finishReason, "tool_calls");
  assert.equal(toolCalls, [{ id: "call_mock_1", ...WEATHER_CALL }]);
});

test("logprobs pass through: one entry per token with top_logprobs alternatives", async ({ env, client }) => {
  const res = await client.chat.completions.create({
    model: "mock/chat",
    messages: HELLO,
    logprobs: true,
    top_logprobs: 2,
  });
  const body = lastRequestBody(env);
  assert.is(body.logprobs, true);
  assert.is(body.top_logprobs, 2);
  const content = res.choices[0]!.logprobs?.content ?? [];
  assert.equal(
    content.map((entry) => entry.token),
    ["Hello ", "from ", "chat-a"],
  );
  assert.is(content[0]!.logprob, -0.1);
  assert.equal(content[0]!.bytes, [...Buffer.from("Hello ", "utf8")]);
  for (const entry of content) assert.is(entry.top_logprobs.length, 2);
  assert.equal(
    content[1]!.top_logprobs.map((t) => t.token),
    ["from ", "from_1"],
  );
});

test("Anthropic endpoint: the answer is translated back to the OpenAI format and costed at its prices", async ({
  env,
  client,
}) => {
  const params: Routed<Params> = {
    model: "mock/chat",
    messages: [{ role: "system", content: "Be brief" }, ...HELLO],
    provider: ANTHROPIC,
  };
  const res = await client.chat.completions.create(params);
  assert.is(res.choices[0]!.message.content, "Hello from claude-x");
  assert.is(res.choices[0]!.finish_reason, "stop");
  assert.match(res.id, /^gen-/);
  assert.is(res.model, "mock/chat");
  const sent = env.upstream.requests[0]!;
  assert.is(sent.path, "/anthropic/v1/messages");
  assert.is(sent.model, "claude-x");
  assert.equal(at(sent.body, "system"), [{ type: "text", text: "Be brief" }]);
  assert.is(at(sent.body, "provider"), undefined);
  // "Be brief" + "Hi there": 16 characters.
  await assertCost(env, res.id, res.usage, PRICES["claude-x"], 4, 3);
});

test("Anthropic endpoint streamed: text reassembles, the final chunk has usage", async ({ env, client }) => {
  const params: Routed<StreamParams> = { model: "mock/chat", messages: HELLO, stream: true, provider: ANTHROPIC };
  const { text, chunks, finishReason } = await assemble(await client.chat.completions.create(params));
  assert.is(text, "Hello from claude-x");
  assert.is(finishReason, "stop");
  assert.is(env.upstream.requests[0]!.path, "/anthropic/v1/messages");
  const last = chunks[chunks.length - 1]!;
  assert.ok(last.usage, "the final chunk has usage");
  await assertCost(env, chunks[0]!.id, last.usage, PRICES["claude-x"], HELLO_PROMPT_TOKENS, 3);
});

test("Anthropic endpoint tool calls: tool_use becomes tool_calls, the tool result becomes a tool_result block", async ({
  env,
  client,
}) => {
  env.upstream.rule({ model: "claude-x", toolCall: WEATHER_CALL, times: 1 });
  const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
  const first: Routed<Params> = { model: "mock/chat", messages: ask, tools: [WEATHER_TOOL], provider: ANTHROPIC };
  const res = await client.chat.completions.create(first);
  const choice = res.choices[0]!;
  assert.is(choice.finish_reason, "tool_calls");
  const toolCall = choice.message.tool_calls?.[0];
  assert.ok(toolCall && toolCall.type === "function", JSON.stringify(choice.message));
  assert.is(toolCall.id, "toolu_mock_1");
  assert.is(toolCall.function.name, "get_weather");
  assert.equal(JSON.parse(toolCall.function.arguments), { city: "Paris" });
  assert.equal(at(lastRequestBody(env), "tools", 0), {
    name: "get_weather",
    description: "Weather of a city",
    input_schema: WEATHER_TOOL.function.parameters,
  });

  const second: Routed<Params> = {
    model: "mock/chat",
    tools: [WEATHER_TOOL],
    messages: [...ask, choice.message, { role: "tool", tool_call_id: toolCall.id, content: "sunny" }],
    provider: ANTHROPIC,
  };
  const followUp = await client.chat.completions.create(second);
  assert.is(followUp.choices[0]!.message.content, "Hello from claude-x");
  const messages = lastRequestBody(env).messages as unknown[];
  assert.equal(messages, [
    { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_mock_1", name: "get_weather", input: { city: "Paris" } }],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_mock_1", content: "sunny" }] },
  ]);
});

test("Anthropic endpoint streamed tool calls reassemble from input_json_delta", async ({ env, client }) => {
  env.upstream.rule({ model: "claude-x", toolCall: WEATHER_CALL, times: 1 });
  const params: Routed<StreamParams> = {
    model: "mock/chat",
    messages: HELLO,
    tools: [WEATHER_TOOL],
    stream: true,
    provider: ANTHROPIC,
  };
  const { toolCalls, finishReason } = await assemble(await client.chat.completions.create(params));
  assert.is(finishReason, "tool_calls");
  assert.is(toolCalls.length, 1);
  assert.is(toolCalls[0]!.id, "toolu_mock_1");
  assert.is(toolCalls[0]!.name, "get_weather");
  assert.equal(JSON.parse(toolCalls[0]!.arguments), { city: "Paris" });
});

/** Little-endian float32s, as OpenAI defines the base64 embedding format. */
function decodeFloat32(base64: string): number[] {
  const bytes = Buffer.from(base64, "base64");
  assert.is(bytes.length % 4, 0);
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

test("embeddings: float vectors in input order, with usage", async ({ env, client }) => {
  const res = await client.embeddings.create({
    model: "mock/embed",
    input: ["alpha", "beta"],
    encoding_format: "float",
  });
  assert.is(res.object, "list");
  assert.is(res.model, "mock/embed");
  assert.equal(
    res.data.map((d) => d.index),
    [0, 1],
  );
  assert.equal(res.data[0]!.embedding, mockVector("alpha", 8));
  assert.equal(res.data[1]!.embedding, mockVector("beta", 8));
  assert.is(res.usage.prompt_tokens, 3);
  assert.is(env.upstream.requests[0]!.path, "/openai/v1/embeddings");
  assert.is(env.upstream.requests[0]!.model, "embed-a");
});

test("embeddings base64: little-endian float32 of the float answer; the SDK's default decodes the same", async ({
  client,
}) => {
  const floats = await client.embeddings.create({ model: "mock/embed", input: "alpha", encoding_format: "float" });
  const base64 = await client.embeddings.create({ model: "mock/embed", input: "alpha", encoding_format: "base64" });
  // With an explicit encoding_format the SDK hands the answer over as it came.
  const encoded: unknown = base64.data[0]!.embedding;
  assert.type(encoded, "string");
  const expected = floats.data[0]!.embedding.map((n) => Math.fround(n));
  assert.equal(decodeFloat32(encoded as string), expected);
  const byDefault = await client.embeddings.create({ model: "mock/embed", input: "alpha" });
  assert.equal(byDefault.data[0]!.embedding, expected);
});

test("embeddings: dimensions is forwarded", async ({ env, client }) => {
  const res = await client.embeddings.create({
    model: "mock/embed",
    input: "alpha",
    dimensions: 3,
    encoding_format: "float",
  });
  assert.is(at(lastRequestBody(env), "dimensions"), 3);
  assert.equal(res.data[0]!.embedding, mockVector("alpha", 3));
});

test("embeddings: token ids and arrays of token ids as input", async ({ env, client }) => {
  const one = await client.embeddings.create({ model: "mock/embed", input: [1, 2, 3], encoding_format: "float" });
  assert.equal(lastRequestBody(env).input, [1, 2, 3]);
  assert.is(one.data.length, 1);
  assert.equal(one.data[0]!.embedding, mockVector([1, 2, 3], 8));

  const two = await client.embeddings.create({ model: "mock/embed", input: [[1, 2], [3]], encoding_format: "float" });
  assert.equal(lastRequestBody(env).input, [[1, 2], [3]]);
  assert.equal(
    two.data.map((d) => d.embedding),
    [mockVector([1, 2], 8), mockVector([3], 8)],
  );
});

test.run();
