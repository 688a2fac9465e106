import * as assert from "uvu/assert";
import OpenAI from "openai";
import { suite } from "../../support/suite.js";
import { at, call, type Reply } from "../../support/http.js";
import type { InferenceGateway } from "../../support/inference-gateway.js";
import { KIND_MODELS, onlyRequest, startKindsGateway } from "../../support/kinds-gateway.js";
import { keyWith } from "../../support/guardrail-keys.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { typedStreamEvents, typesOf } from "../../support/sse.js";

/**
 * POST /responses and POST /messages to providers that speak those APIs themselves: the body as
 * the client sent it (gateway fields removed, the model rewritten, content filters applied), the
 * answer and every event as the provider sent them (with the catalog's model, the gateway's
 * generation id where the format takes it, the cost on the usage), billed from the provider's
 * usage, cached; a fallback to a chat-only endpoint translates; what chat cannot express is a 400
 * only where the call would be translated.
 */
const test = suite<{ env: InferenceGateway }>("inference: Responses and Messages natively");
test.before(async (ctx) => {
  ctx.env = await startKindsGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

function post(
  env: InferenceGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(env.gw.url, "POST", `/api/v1${path}`, { key: env.gw.key, body, headers });
}

/**
 * Every Responses field the bug report named, the rest of the API's, a hosted tool and a stored
 * response chat cannot express, and one no API has.
 */
const RESPONSES_FIELDS = {
  instructions: "Be brief",
  input: [{ role: "user", content: [{ type: "input_text", text: "Hi there" }] }],
  service_tier: "flex",
  prompt_cache_key: "cache-7",
  safety_identifier: "user-hash-3",
  parallel_tool_calls: false,
  reasoning: { effort: "low", summary: "auto" },
  text: { format: { type: "json_object" }, verbosity: "low" },
  include: ["reasoning.encrypted_content"],
  truncation: "auto",
  store: true,
  metadata: { ticket: "T-1" },
  max_output_tokens: 500,
  top_logprobs: 2,
  previous_response_id: "resp_earlier",
  tools: [{ type: "web_search" }, { type: "function", name: "lookup", parameters: { type: "object" } }],
  tool_choice: "auto",
  x_vendor_option: { depth: 2, flags: ["a"] },
};
/** The gateway's own fields: they steer it and never reach a provider. */
const GATEWAY_FIELDS = { provider: { sort: "price" }, session_id: "session-1", models: ["k/compat"] };
const ANSWER_FIELDS = { x_provider_note: { source: "mock", n: 1 } };

for (const slug of ["openai-native", "azure-v1"] as const) {
  test(`${slug}: a Responses call goes upstream as sent and its answer comes back as the provider sent it`, async ({
    env,
  }) => {
    env.upstream.rule({ answerFields: ANSWER_FIELDS });
    const res = await post(env, "/responses", {
      model: `k/${slug}`,
      ...RESPONSES_FIELDS,
      ...GATEWAY_FIELDS,
      user: "end-user-9",
    });
    assert.is(res.status, 200, res.text);
    const sent = onlyRequest(env.upstream);
    assert.is(sent.path, slug === "azure-v1" ? "/azure/openai/v1/responses" : "/openai/v1/responses");
    assert.equal(
      sent.body,
      { ...RESPONSES_FIELDS, model: KIND_MODELS[slug] },
      "every field as sent; gateway fields and `user` (the gateway's end user) stay home",
    );

    const body = res.body as Record<string, unknown>;
    assert.match(String(body.id), /^resp_mock_/, "the provider's id: previous_response_id names it");
    assert.is(body.model, `k/${slug}`);
    assert.equal(body.x_provider_note, ANSWER_FIELDS.x_provider_note);
    assert.is(at(body, "output", 0, "content", 0, "text"), `Hello from ${KIND_MODELS[slug]}`);
    const usage = body.usage as { cost: number; input_tokens: number; output_tokens: number };
    assert.ok(
      Math.abs(usage.cost - (usage.input_tokens * 0.000001 + usage.output_tokens * 0.000002)) < 1e-12,
      JSON.stringify(usage),
    );
    const generationId = res.headers.get("x-gateway-generation-id");
    assert.match(String(generationId), /^gen-/);
    const [row] = await ledgerRowsOf(env.gw, String(generationId));
    assert.equal(
      [row?.status, row?.prompt_tokens, row?.completion_tokens, row?.end_user],
      ["success", usage.input_tokens, usage.output_tokens, "end-user-9"],
    );
  });
}

test(
  "a streamed native Responses call relays every event, " +
    "the catalog's model in them, the cost on response.completed",
  async ({ env }) => {
    env.upstream.rule({ answerFields: ANSWER_FIELDS });
    const res = await post(env, "/responses", {
      model: "k/openai-native",
      input: "Hi there",
      stream: true,
      stream_options: { include_obfuscation: false },
    });
    assert.is(res.status, 200, res.text);
    assert.equal(onlyRequest(env.upstream).body, {
      input: "Hi there",
      model: KIND_MODELS["openai-native"],
      stream: true,
      stream_options: { include_obfuscation: false },
    });
    const events = typedStreamEvents(res);
    assert.equal(typesOf(events).slice(0, 4), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    assert.equal(
      events.map((e) => e.sequence_number),
      events.map((_, index) => index),
      "the provider's own numbering",
    );
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta);
    assert.equal(deltas, ["Hello ", "from ", KIND_MODELS["openai-native"]]);
    const completed = events.at(-1)!;
    assert.is(completed.type, "response.completed");
    assert.is(at(completed, "response", "model"), "k/openai-native");
    assert.is(at(events[0], "response", "model"), "k/openai-native");
    assert.equal(at(completed, "response", "x_provider_note"), ANSWER_FIELDS.x_provider_note);
    assert.is(typeof at(completed, "response", "usage", "cost"), "number");
    const [row] = await ledgerRowsOf(env.gw, String(res.headers.get("x-gateway-generation-id")));
    assert.equal(
      [row?.streamed, row?.prompt_tokens, row?.completion_tokens],
      [true, at(completed, "response", "usage", "input_tokens"), 3],
    );
  },
);

/**
 * Messages fields chat has no word for, Anthropic's newer ones, cache_control on every kind of
 * block, and one no API has.
 */
const MESSAGES_FIELDS = {
  max_tokens: 300,
  system: [{ type: "text", text: "Be brief", cache_control: { type: "ephemeral" } }],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Hi there", cache_control: { type: "ephemeral", ttl: "1h" } },
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
          cache_control: { type: "ephemeral" },
        },
        {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: "notes" },
          citations: { enabled: true },
        },
      ],
    },
  ],
  tools: [
    { name: "lookup", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } },
    { type: "web_search_20250305", name: "web_search", max_uses: 2 },
  ],
  thinking: { type: "enabled", budget_tokens: 1024 },
  top_k: 5,
  mcp_servers: [{ type: "url", url: "https://mcp.example/sse", name: "docs" }],
  container: "container_1",
  service_tier: "standard_only",
  metadata: { user_id: "end-user-4" },
  x_vendor_option: { depth: 2 },
};

test(
  "anthropic: a Messages call goes upstream as sent; " + "the answer keeps Anthropic's fields under the gateway's id",
  async ({ env }) => {
    env.upstream.rule({ answerFields: ANSWER_FIELDS });
    const res = await post(env, "/messages", { model: "k/anthropic", ...MESSAGES_FIELDS, ...GATEWAY_FIELDS });
    assert.is(res.status, 200, res.text);
    const sent = onlyRequest(env.upstream);
    assert.is(sent.path, "/anthropic/v1/messages");
    assert.equal(sent.body, { ...MESSAGES_FIELDS, model: KIND_MODELS.anthropic });
    const body = res.body as Record<string, unknown>;
    assert.match(String(body.id), /^gen-/);
    assert.is(body.id, res.headers.get("x-gateway-generation-id"));
    assert.is(body.model, "k/anthropic");
    assert.equal(body.x_provider_note, ANSWER_FIELDS.x_provider_note);
    assert.equal(body.content, [{ type: "text", text: `Hello from ${KIND_MODELS.anthropic}` }]);
    const usage = body.usage as { cost: number; input_tokens: number; output_tokens: number };
    assert.ok(
      Math.abs(usage.cost - (usage.input_tokens * 0.000001 + usage.output_tokens * 0.000002)) < 1e-12,
      JSON.stringify(usage),
    );
    const [row] = await ledgerRowsOf(env.gw, String(body.id));
    assert.equal([row?.status, row?.completion_tokens, row?.end_user], ["success", usage.output_tokens, "end-user-4"]);
  },
);

test(
  "anthropic: a streamed Messages call relays Anthropic's events, " +
    "the gateway's id on message_start, the cost on message_delta",
  async ({ env }) => {
    env.upstream.rule({ answerFields: ANSWER_FIELDS, reasoning: "Let me think" });
    const res = await post(env, "/messages", {
      model: "k/anthropic",
      max_tokens: 300,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "Hi there" }],
      stream: true,
    });
    assert.is(res.status, 200, res.text);
    assert.is(at(onlyRequest(env.upstream).body, "stream"), true);
    const events = typedStreamEvents(res);
    assert.equal(
      typesOf(events).slice(0, 3),
      ["message_start", "ping", "content_block_start"],
      "ping included: every event passes",
    );
    assert.is(at(events[0], "message", "id"), res.headers.get("x-gateway-generation-id"));
    assert.is(at(events[0], "message", "model"), "k/anthropic");
    assert.equal(at(events[0], "message", "x_provider_note"), ANSWER_FIELDS.x_provider_note);
    const thinking = events
      .filter((e) => at(e, "delta", "type") === "thinking_delta")
      .map((e) => at(e, "delta", "thinking"));
    assert.equal(thinking, ["Let ", "me ", "think"], "thinking blocks pass as they came");
    assert.equal(typesOf(events).slice(-2), ["message_delta", "message_stop"]);
    assert.is(typeof at(events.at(-2), "usage", "cost"), "number");
    const [row] = await ledgerRowsOf(env.gw, String(res.headers.get("x-gateway-generation-id")));
    assert.equal([row?.streamed, row?.completion_tokens], [true, 6]);
  },
);

test(
  "a fallback from a native endpoint to a chat-only one translates; " +
    "what chat cannot express is refused only there",
  async ({ env }) => {
    env.upstream.rule({ model: KIND_MODELS["openai-native"], status: 503, times: 1 });
    const res = await post(env, "/responses", { model: "k/both", input: "Hi there", service_tier: "flex" });
    assert.is(res.status, 200, res.text);
    assert.equal(
      env.upstream.requests.map((r) => r.path),
      ["/openai/v1/responses", "/openai/v1/chat/completions"],
    );
    assert.is(at(env.upstream.requests[1]!.body, "service_tier"), "flex");
    assert.match(String(at(res.body, "id")), /^gen-/, "a translated answer carries the generation id");
    assert.is(at(res.body, "output", 0, "content", 0, "text"), `Hello from ${KIND_MODELS.compat}`);

    env.upstream.reset();
    const hosted = { input: "Hi", tools: [{ type: "web_search" }] };
    const refused = await post(env, "/responses", { model: "k/compat", ...hosted });
    assert.is(refused.status, 400, refused.text);
    assert.match(String(at(refused.body, "error", "message")), /^tools\[0\]\.type must be function/);
    const stored = await post(env, "/responses", { model: "k/compat", input: "Hi", previous_response_id: "resp_1" });
    assert.is(stored.status, 400, stored.text);
    assert.match(String(at(stored.body, "error", "message")), /^previous_response_id/);
    const anthropicTool = await post(env, "/messages", {
      model: "k/gemini",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
      tools: [{ type: "web_search_20250305", name: "web_search" }],
    });
    assert.is(anthropicTool.status, 400, anthropicTool.text);
    assert.match(String(at(anthropicTool.body, "error", "message")), /^tools\[0\]\.type/);
    assert.is(env.upstream.requests.length, 0, "nothing untranslatable reached a chat-only provider");
    const served = await post(env, "/responses", { model: "k/openai-native", ...hosted });
    assert.is(served.status, 200, served.text);
    assert.equal(at(onlyRequest(env.upstream).body, "tools"), hosted.tools);
    // A malformed body is refused whatever the endpoint.
    const malformed = await post(env, "/responses", { model: "k/openai-native", input: 5 });
    assert.is(malformed.status, 400, malformed.text);
  },
);

test("content filters rewrite the native body before it goes upstream", async ({ env }) => {
  const key = await keyWith(env, { content_filter_builtins: [{ slug: "email", action: "redact" }] });
  const res = await call(env.gw.url, "POST", "/api/v1/responses", {
    key,
    body: {
      model: "k/openai-native",
      instructions: "Reply to jane.native@example.com",
      input: "Mail jane.native@example.com",
      tools: [{ type: "web_search" }],
    },
  });
  assert.is(res.status, 200, res.text);
  const sent = JSON.stringify(onlyRequest(env.upstream).body);
  assert.not.ok(sent.includes("jane.native@example.com"), sent);
  assert.ok(sent.includes("Mail [EMAIL]") && sent.includes("Reply to [EMAIL]"), sent);
});

test("native answers are cached: a plain hit, and a streamed hit replayed as the API's events", async ({ env }) => {
  const cached = { "x-gateway-cache-ttl": "300" };
  const ask = { model: "k/openai-native", input: `Cache me ${Math.random()}` };
  const first = await post(env, "/responses", ask, cached);
  assert.is(first.headers.get("x-gateway-cache"), "miss", first.text);
  const hit = await post(env, "/responses", ask, cached);
  assert.is(hit.headers.get("x-gateway-cache"), "hit", hit.text);
  assert.is(at(hit.body, "output", 0, "content", 0, "text"), at(first.body, "output", 0, "content", 0, "text"));
  assert.is(at(hit.body, "usage", "cost"), 0);
  const replayed = await post(env, "/responses", { ...ask, stream: true }, cached);
  assert.is(replayed.headers.get("x-gateway-cache"), "hit");
  const events = typedStreamEvents(replayed);
  assert.is(events.at(-1)!.type, "response.completed");
  assert.is(
    events
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta)
      .join(""),
    at(first.body, "output", 0, "content", 0, "text"),
  );

  const message = {
    model: "k/anthropic",
    max_tokens: 100,
    messages: [{ role: "user", content: `Cache me ${Math.random()}` }],
  };
  const streamed = await post(env, "/messages", { ...message, stream: true }, cached);
  assert.is(streamed.headers.get("x-gateway-cache"), "miss", streamed.text);
  const fromStream = await post(env, "/messages", message, cached);
  assert.is(fromStream.headers.get("x-gateway-cache"), "hit", fromStream.text);
  assert.equal(at(fromStream.body, "content"), [{ type: "text", text: `Hello from ${KIND_MODELS.anthropic}` }]);
  assert.is(at(fromStream.body, "id"), fromStream.headers.get("x-gateway-generation-id"));
  assert.is(env.upstream.requests.length, 2, "one upstream call per question");
});

test("the official openai SDK: responses.create with every field reaches the provider with every field", async ({
  env,
}) => {
  const client = new OpenAI({ apiKey: env.gw.key, baseURL: `${env.gw.url}/api/v1`, maxRetries: 0 });
  const fields = {
    input: "Hi there",
    service_tier: "flex",
    prompt_cache_key: "cache-7",
    safety_identifier: "user-hash-3",
    parallel_tool_calls: false,
    reasoning: { effort: "low" },
    text: { verbosity: "low" },
    store: false,
    metadata: { ticket: "T-1" },
    tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }],
  } satisfies Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming>;
  // A field the SDK's types do not know yet travels too, as in the bug report.
  const body = { model: "k/openai-native", ...fields, x_vendor_option: "on" };
  const res = await client.responses.create(body);
  assert.is(res.output_text, `Hello from ${KIND_MODELS["openai-native"]}`);
  assert.equal(onlyRequest(env.upstream).body, {
    ...fields,
    x_vendor_option: "on",
    model: KIND_MODELS["openai-native"],
  });

  env.upstream.reset();
  let text = "";
  for await (const event of await client.responses.create({ ...body, stream: true }))
    if (event.type === "response.output_text.delta") text += event.delta;
  assert.is(text, `Hello from ${KIND_MODELS["openai-native"]}`);
  assert.equal(onlyRequest(env.upstream).body, {
    ...fields,
    x_vendor_option: "on",
    model: KIND_MODELS["openai-native"],
    stream: true,
  });
});

test.run();
