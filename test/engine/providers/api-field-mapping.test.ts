import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { at, call, type Reply } from "../../support/http.js";
import type { InferenceGateway } from "../../support/inference-gateway.js";
import { KIND_MODELS, onlyRequest, startKindsGateway, type KindSlug } from "../../support/kinds-gateway.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { sseData, typedStreamEvents } from "../../support/sse.js";

/**
 * Every API on every provider kind where the gateway translates (docs/providers.md has the
 * tables): each field with a counterpart arrives upstream in the provider's words, a field no API
 * knows arrives as sent, OpenAI-only parameters stay away from the providers that would refuse
 * them, and the provider's own answer fields come back, plain and streamed. The native paths are
 * test/engine/inference/native-formats.test.ts.
 */
const test = suite<{ env: InferenceGateway }>("providers: fields on every API and provider kind");
test.before(async (ctx) => {
  ctx.env = await startKindsGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const VENDOR = { x_vendor_option: { depth: 2, flags: ["a"] } };
const ANSWER_FIELDS = { x_provider_note: { source: "mock" } };
const OPENAI_FORMAT: readonly KindSlug[] = ["openai-native", "compat", "azure-v1", "azure-dated"];
/** What the tests of a translated format check, as their names say it. */
const TRANSLATED_FIELDS = "mapped fields, an unknown field as sent, the provider's answer fields back";

type Sent = Record<string, unknown>;

function post(env: InferenceGateway, path: string, body: unknown): Promise<Reply> {
  return call(env.gw.url, "POST", `/api/v1${path}`, { key: env.gw.key, body });
}

/** The provider's answer fields, found in a stream's chunks or events (bedrock streams have no place for them). */
function streamHasAnswerFields(res: Reply, where: (data: Record<string, unknown>) => unknown): boolean {
  return (sseData(res.text) as Array<Record<string, unknown>>).some(
    (data) => JSON.stringify(where(data)) === JSON.stringify(ANSWER_FIELDS.x_provider_note),
  );
}

/** A field's absence, or what the provider's words hold, per kind. */
const notSent = (sent: Sent, ...names: string[]) => {
  for (const name of names) assert.is(sent[name], undefined, `${name} is not sent`);
};

// ---------------------------------------------------------------------------------------------
// Chat completions
// ---------------------------------------------------------------------------------------------

const CHAT = {
  messages: [
    { role: "system", content: "Be brief" },
    { role: "user", content: "Hi there" },
  ],
  max_tokens: 4000,
  temperature: 0.5,
  stop: ["END"],
  reasoning_effort: "high",
  service_tier: "flex",
  ...VENDOR,
};

const CHAT_EXPECTED: Record<KindSlug, (sent: Sent) => void> = {
  ...Object.fromEntries(
    OPENAI_FORMAT.map((slug) => [slug, (sent: Sent) => assert.equal(sent, { ...CHAT, model: KIND_MODELS[slug] })]),
  ),
  anthropic(sent) {
    assert.equal(sent.thinking, { type: "enabled", budget_tokens: 3200 }, "reasoning_effort high: 80% of max_tokens");
    assert.equal(
      [sent.max_tokens, sent.temperature, sent.stop_sequences, sent.system],
      [4000, 0.5, ["END"], [{ type: "text", text: "Be brief" }]],
    );
    notSent(sent, "reasoning_effort", "service_tier", "stop");
  },
  gemini(sent) {
    assert.equal(sent.generationConfig, {
      temperature: 0.5,
      maxOutputTokens: 4000,
      stopSequences: ["END"],
      thinkingConfig: { includeThoughts: true },
    });
    notSent(sent, "reasoning_effort", "service_tier", "max_tokens");
  },
  bedrock(sent) {
    assert.equal(sent.inferenceConfig, { maxTokens: 4000, temperature: 0.5, stopSequences: ["END"] });
    notSent(sent, "reasoning_effort", "service_tier", "max_tokens");
  },
} as Record<KindSlug, (sent: Sent) => void>;

for (const [slug, expected] of Object.entries(CHAT_EXPECTED) as Array<[KindSlug, (sent: Sent) => void]>) {
  test(
    `chat on ${slug}: mapped fields in the provider's words, ` +
      "an unknown field as sent, the provider's answer fields back",
    async ({ env }) => {
      env.upstream.rule({ answerFields: ANSWER_FIELDS });
      const res = await post(env, "/chat/completions", { model: `k/${slug}`, ...CHAT });
      assert.is(res.status, 200, res.text);
      const sent = onlyRequest(env.upstream).body as Sent;
      assert.equal(sent.x_vendor_option, VENDOR.x_vendor_option);
      expected(sent);
      assert.equal(at(res.body, "x_provider_note"), ANSWER_FIELDS.x_provider_note);
      if (slug === "bedrock") return;
      const streamed = await post(env, "/chat/completions", { model: `k/${slug}`, ...CHAT, stream: true });
      assert.ok(
        streamHasAnswerFields(streamed, (chunk) => chunk.x_provider_note),
        streamed.text,
      );
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Responses, translated to chat
// ---------------------------------------------------------------------------------------------

const RESPONSES = {
  instructions: "Be brief",
  input: "Hi there",
  max_output_tokens: 4000,
  temperature: 0.5,
  reasoning: { effort: "high", summary: "auto" },
  text: { format: { type: "json_object" }, verbosity: "low" },
  service_tier: "flex",
  prompt_cache_key: "cache-7",
  safety_identifier: "user-hash-3",
  include: ["reasoning.encrypted_content"],
  truncation: "auto",
  ...VENDOR,
};

const chatOfResponses = (slug: KindSlug) => (sent: Sent) =>
  assert.equal(sent, {
    messages: [
      { role: "system", content: "Be brief" },
      { role: "user", content: "Hi there" },
    ],
    model: KIND_MODELS[slug],
    max_completion_tokens: 4000,
    temperature: 0.5,
    reasoning_effort: "high",
    response_format: { type: "json_object" },
    verbosity: "low",
    service_tier: "flex",
    prompt_cache_key: "cache-7",
    safety_identifier: "user-hash-3",
    ...VENDOR,
  });

const RESPONSES_EXPECTED: Partial<Record<KindSlug, (sent: Sent) => void>> = {
  compat: chatOfResponses("compat"),
  "azure-dated": chatOfResponses("azure-dated"),
  anthropic(sent) {
    assert.equal(
      [sent.system, sent.max_tokens, sent.temperature, sent.thinking],
      [[{ type: "text", text: "Be brief" }], 4000, 0.5, { type: "enabled", budget_tokens: 3200 }],
    );
    notSent(
      sent,
      "service_tier",
      "prompt_cache_key",
      "safety_identifier",
      "include",
      "truncation",
      "verbosity",
      "response_format",
    );
  },
  gemini(sent) {
    assert.equal(sent.systemInstruction, { parts: [{ text: "Be brief" }] });
    assert.equal(sent.generationConfig, {
      temperature: 0.5,
      maxOutputTokens: 4000,
      responseMimeType: "application/json",
      thinkingConfig: { includeThoughts: true },
    });
    notSent(sent, "service_tier", "prompt_cache_key", "include");
  },
  bedrock(sent) {
    assert.equal([sent.system, sent.inferenceConfig], [[{ text: "Be brief" }], { maxTokens: 4000, temperature: 0.5 }]);
    notSent(sent, "service_tier", "prompt_cache_key", "include");
  },
};

for (const [slug, expected] of Object.entries(RESPONSES_EXPECTED) as Array<[KindSlug, (sent: Sent) => void]>) {
  test(`responses on ${slug} (translated): ${TRANSLATED_FIELDS}`, async ({ env }) => {
    env.upstream.rule({ answerFields: ANSWER_FIELDS });
    const res = await post(env, "/responses", { model: `k/${slug}`, ...RESPONSES });
    assert.is(res.status, 200, res.text);
    const sent = onlyRequest(env.upstream).body as Sent;
    assert.equal(sent.x_vendor_option, VENDOR.x_vendor_option);
    expected(sent);
    assert.is(at(res.body, "object"), "response");
    assert.equal(at(res.body, "x_provider_note"), ANSWER_FIELDS.x_provider_note);
    if (slug === "bedrock") return;
    const events = typedStreamEvents(await post(env, "/responses", { model: `k/${slug}`, ...RESPONSES, stream: true }));
    assert.equal(at(events.at(-1), "response", "x_provider_note"), ANSWER_FIELDS.x_provider_note);
  });
}

// ---------------------------------------------------------------------------------------------
// Messages, translated to chat
// ---------------------------------------------------------------------------------------------

const MESSAGES = {
  max_tokens: 4000,
  system: "Be brief",
  messages: [{ role: "user", content: "Hi there" }],
  stop_sequences: ["END"],
  top_k: 5,
  thinking: { type: "enabled", budget_tokens: 2048 },
  metadata: { user_id: "end-user-2" },
  ...VENDOR,
};

const chatOfMessages = (slug: KindSlug) => (sent: Sent) =>
  assert.equal(sent, {
    messages: [
      { role: "system", content: "Be brief" },
      { role: "user", content: "Hi there" },
    ],
    model: KIND_MODELS[slug],
    max_tokens: 4000,
    stop: ["END"],
    top_k: 5,
    reasoning: { max_tokens: 2048 },
    ...VENDOR,
  });

const MESSAGES_EXPECTED: Partial<Record<KindSlug, (sent: Sent) => void>> = {
  ...Object.fromEntries(OPENAI_FORMAT.map((slug) => [slug, chatOfMessages(slug)])),
  gemini(sent) {
    assert.equal(sent.generationConfig, {
      topK: 5,
      maxOutputTokens: 4000,
      stopSequences: ["END"],
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    notSent(sent, "metadata", "thinking", "top_k");
  },
  bedrock(sent) {
    assert.equal(
      [sent.inferenceConfig, sent.additionalModelRequestFields],
      [{ maxTokens: 4000, stopSequences: ["END"] }, { inferenceConfig: { topK: 5 } }],
    );
    notSent(sent, "metadata", "thinking", "top_k");
  },
};

for (const [slug, expected] of Object.entries(MESSAGES_EXPECTED) as Array<[KindSlug, (sent: Sent) => void]>) {
  test(`messages on ${slug} (translated): ${TRANSLATED_FIELDS}`, async ({ env }) => {
    env.upstream.rule({ answerFields: ANSWER_FIELDS });
    const res = await post(env, "/messages", { model: `k/${slug}`, ...MESSAGES });
    assert.is(res.status, 200, res.text);
    const sent = onlyRequest(env.upstream).body as Sent;
    assert.equal(sent.x_vendor_option, VENDOR.x_vendor_option);
    expected(sent);
    assert.is(at(res.body, "type"), "message");
    assert.equal(at(res.body, "x_provider_note"), ANSWER_FIELDS.x_provider_note);
    const [row] = await ledgerRowsOf(env.gw, String(at(res.body, "id")));
    assert.is(row?.end_user, "end-user-2", "metadata.user_id is the gateway's end user");
    if (slug === "bedrock") return;
    const events = typedStreamEvents(await post(env, "/messages", { model: `k/${slug}`, ...MESSAGES, stream: true }));
    assert.equal(at(events[0], "message", "x_provider_note"), ANSWER_FIELDS.x_provider_note);
  });
}

// ---------------------------------------------------------------------------------------------
// Embeddings
// ---------------------------------------------------------------------------------------------

const EMBEDDINGS_EXPECTED: Record<string, (sent: Sent) => unknown> = {
  compat: (sent) => sent.x_vendor_option,
  "azure-v1": (sent) => sent.x_vendor_option,
  gemini: (sent) => at(sent, "requests", 0, "x_vendor_option"),
  bedrock: (sent) => sent.x_vendor_option,
};

for (const [slug, unknownOf] of Object.entries(EMBEDDINGS_EXPECTED)) {
  test(`embeddings on ${slug}: an unknown field reaches the provider as sent`, async ({ env }) => {
    const res = await post(env, "/embeddings", { model: `e/${slug}`, input: "Hi there", dimensions: 4, ...VENDOR });
    assert.is(res.status, 200, res.text);
    assert.equal(unknownOf(onlyRequest(env.upstream).body as Sent), VENDOR.x_vendor_option);
  });
}

test.run();
