import * as assert from "uvu/assert";
import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import { suite } from "../../support/suite.js";
import {
  ACCEPTED,
  Chat,
  chat,
  compiled,
  Embedding,
  embed,
  Endpoint,
  endpoint,
  expected,
  Guardrail,
  Key,
  nested,
  pricing,
  Upload,
  user,
} from "./json-validator-fixture.js";

/**
 * The compiled JSON validator refuses what the two-step path refuses, with the same 400 (message
 * and field): a table of hand-written bad bodies, then the rule it adds, unknown fields checked as
 * free-form JSON (json-validator-fixture.ts has the reference).
 */
const test = suite("compiled JSON validator: bad bodies");

const BAD: Array<[string, DescMessage, JsonObject]> = [
  // Types, at every level.
  ["model a number", Chat, chat({ model: 5 })],
  ["messages an object", Chat, chat({ messages: {} })],
  ["a message null", Chat, chat({ messages: [user(), null] })],
  ["a message a string", Chat, chat({ messages: ["hi"] })],
  ["role not a wire name", Chat, chat({ messages: [{ role: "USER", content: "x" }] })],
  ["role a number", Chat, chat({ messages: [{ role: 3 }] })],
  ["stream a string", Chat, chat({ stream: "true" })],
  ["temperature a string", Chat, chat({ temperature: "1" })],
  ["temperature NaN", Chat, chat({ temperature: Number.NaN })],
  ["response_format an array", Chat, chat({ response_format: [] })],
  ["logit_bias value a string", Chat, chat({ logit_bias: { "50256": "x" } })],
  ["logit_bias key with a space, value null", Chat, chat({ logit_bias: { "a b": null } })],
  ["provider an array", Chat, chat({ provider: [] })],
  ["provider.order item a number", Chat, chat({ provider: { order: ["a", 1] } })],
  ["provider.sort not a wire name", Chat, chat({ provider: { sort: "cheapest" } })],
  [
    "tool_calls[0].function a string",
    Chat,
    chat({ messages: [{ role: "assistant", tool_calls: [{ id: "c", function: "f" }] }] }),
  ],
  ["tool_calls[0].index a fraction", Chat, chat({ messages: [{ role: "assistant", tool_calls: [{ index: 0.5 }] }] })],
  [
    "a decode error after a rule violation still comes first",
    Chat,
    chat({ max_tokens: 0, messages: [{ role: "nobody" }] }),
  ],
  // Integers: ranges and digit strings.
  ["max_tokens above int32", Chat, chat({ max_tokens: 2147483648 })],
  ["max_tokens as a digit string above int32", Chat, chat({ max_tokens: "2147483648" })],
  ["seed beyond a safe integer", Chat, chat({ seed: "9007199254740993" })],
  ["seed with a plus sign", Chat, chat({ seed: "+5" })],
  ["seed in exponent notation, fractional", Chat, chat({ seed: 1.5e-3 })],
  ["n zero as a digit string", Chat, chat({ n: "0" })],
  ["top_logprobs 21", Chat, chat({ top_logprobs: 21 })],
  ["dimensions -0 (set: explicit presence)", Embedding, embed({ dimensions: -0 })],
  // Rules.
  ["no messages", Chat, { model: "m" }],
  ["empty messages", Chat, chat({ messages: [] })],
  ["a message without role", Chat, chat({ messages: [{ content: "x" }] })],
  ["frequency_penalty -2.5", Chat, chat({ frequency_penalty: -2.5 })],
  ["user of 513 astral characters", Chat, chat({ user: "😀".repeat(513) })],
  ["session_id of 257 characters", Chat, chat({ session_id: "s".repeat(257) })],
  ["provider.only with an empty slug", Chat, chat({ provider: { only: [""] } })],
  ["tool function name with a space", Chat, chat({ tools: [{ type: "function", function: { name: "a b" } }] })],
  [
    "tool function name of 65 characters",
    Chat,
    chat({ tools: [{ type: "function", function: { name: "f".repeat(65) } }] }),
  ],
  ["tool without type", Chat, chat({ tools: [{ function: { name: "f" } }] })],
  ["embedding without input", Embedding, { model: "m" }],
  ["embedding model empty (implicit presence: not set, required)", Embedding, embed({ model: "" })],
  ["guardrail name missing", Guardrail, {}],
  ["guardrail name of 201 characters", Guardrail, { name: "g".repeat(201) }],
  ["guardrail workspace_id not a UUID", Guardrail, { name: "g", workspace_id: "not-a-uuid" }],
  ["guardrail limit_usd negative", Guardrail, { name: "g", limit_usd: -1 }],
  ["guardrail reset_interval unknown", Guardrail, { name: "g", reset_interval: "hourly" }],
  ["guardrail allowed_data_regions item unknown", Guardrail, { name: "g", allowed_data_regions: ["us", "mars"] }],
  [
    "guardrail builtin action off pattern",
    Guardrail,
    { name: "g", content_filter_builtins: [{ slug: "email", action: "shout" }] },
  ],
  ["guardrail builtin without slug", Guardrail, { name: "g", content_filter_builtins: [{ action: "flag" }] }],
  ["guardrail content filter not an object", Guardrail, { name: "g", content_filters: [[]] }],
  ["guardrail allowed_models item of 257 characters", Guardrail, { name: "g", allowed_models: ["m".repeat(257)] }],
  ["endpoint base_url not https", Endpoint, endpoint({ base_url: "http://x" })],
  ["endpoint pricing.prompt not a decimal", Endpoint, endpoint({ pricing: { ...pricing, prompt: "1e-3" } })],
  ["endpoint pricing without completion", Endpoint, endpoint({ pricing: { prompt: "1" } })],
  ["endpoint provider_slug missing", Endpoint, { model_permaslug: "m", upstream_model_id: "u" }],
  ["endpoint declared_region unknown", Endpoint, endpoint({ declared_region: "asia" })],
  ["key expires_at not a timestamp", Key, { name: "k", expires_at: "tomorrow" }],
  ["key expires_at a number", Key, { name: "k", expires_at: 5 }],
  ["upload: both members of the oneof", Upload, { metadata: { filename: "a" }, chunk: "AAAA" }],
  ["upload: chunk not base64", Upload, { chunk: "!!!" }],
  ["upload: metadata.workspace_id not a UUID", Upload, { metadata: { workspace_id: "x" } }],
  // Text: NUL and lone surrogates in strings and keys, at every level.
  ["NUL in model", Chat, chat({ model: "a\u0000" })],
  ["lone surrogate in model (protobuf-es refuses it while reading)", Chat, chat({ model: "a\ud800" })],
  ["lone surrogate in a models item", Chat, chat({ models: ["a", "\udc00"] })],
  ["lone surrogate in a logit_bias key", Chat, chat({ logit_bias: { "\ud800": 1 } })],
  ["NUL in a logit_bias key", Chat, chat({ logit_bias: { "a\u0000": 1 } })],
  ["NUL in content", Chat, chat({ messages: [user("a\u0000")] })],
  ["NUL in a content part", Chat, chat({ messages: [user([{ type: "text", text: "a\u0000" }])] })],
  ["lone surrogate in a response_format key", Chat, chat({ response_format: { "\ud800": 1 } })],
  [
    "NUL deep in response_format",
    Chat,
    chat({ response_format: { type: "json_schema", json_schema: { schema: { a: ["x", "\u0000"] } } } }),
  ],
  [
    "Infinity in a tool's parameters",
    Chat,
    chat({ tools: [{ type: "function", function: { name: "f", parameters: { x: Number.POSITIVE_INFINITY } } }] }),
  ],
  [
    "lone surrogate in messages[1].name",
    Chat,
    chat({ messages: [user(), { role: "user", name: "\udfff", content: "x" }] }),
  ],
  ["NUL in a guardrail content filter key", Guardrail, { name: "g", content_filters: [{ "a\u0000": 1 }] }],
  ["NUL in stop", Chat, chat({ stop: ["a", "b\u0000"] })],
  // Nesting: protobuf-es' recursion limit counts from the root, and differs for Value and Struct.
  ["response_format 98 levels under a key", Chat, chat({ response_format: { a: nested(98) } })],
  ["stop 98 levels deep", Chat, chat({ stop: nested(98) })],
  ["content 97 levels deep (one message down)", Chat, chat({ messages: [user(nested(97))] })],
  [
    "tool parameters 96 levels deep (two messages down)",
    Chat,
    chat({ tools: [{ type: "function", function: { name: "f", parameters: { a: nested(96) } } }] }),
  ],
  ["embedding input 98 levels deep", Embedding, embed({ input: nested(98) })],
  ["too deep after a NUL: the reader's error wins", Chat, chat({ user: "a\u0000", stop: nested(98) })],
  [
    "too deep before a lone surrogate: the first in reading order wins",
    Chat,
    chat({ stop: nested(98), model: "\ud800" }),
  ],
  ["lone surrogate before too deep", Chat, chat({ model: "\ud800", stop: nested(98) })],
  // Names: lowerCamel, both names, nulls.
  ["lowerCamel maxTokens 0", Chat, chat({ maxTokens: 0 })],
  ["both names, the later null: the earlier counts", Chat, chat({ max_tokens: 0, maxTokens: null })],
  ["both names, the later wins", Chat, chat({ maxTokens: 5, max_tokens: 0 })],
  ["both names, the earlier is a bad type (still a decode error)", Chat, chat({ maxTokens: "x", max_tokens: 5 })],
  [
    "both names, the later too deep, at the earlier's place",
    Chat,
    { responseFormat: {}, model: "\ud800", messages: [user()], response_format: { a: nested(98) } },
  ],
  ["lowerCamel inside a nested message", Chat, chat({ messages: [{ role: "tool", toolCallId: "\u0000" }] })],
  ["lowerCamel topP out of range", Chat, chat({ topP: 1.5 })],
  ["messages null: not set, so required", Chat, { model: "m", messages: null }],
  ["role null: not set, so required", Chat, chat({ messages: [{ role: null, content: "x" }] })],
];

test("every bad body gets the two-step path's answer", () => {
  assert.ok(BAD.length >= 40);
  for (const [label, schema, body] of BAD) {
    const want = expected(schema, body);
    assert.is.not(want, ACCEPTED, `${label}: the reference accepts it`);
    assert.is(compiled(schema, body).outcome, want, label);
  }
});

test("unknown fields are free-form JSON: named by their key path, checked after every other rule", () => {
  const refused = (schema: DescMessage, body: JsonObject) =>
    JSON.parse(compiled(schema, body).outcome) as { message: string; field: string | null };
  assert.is(
    expected(Chat, chat({ metadata: { x: "a\u0000" } })),
    JSON.stringify({
      status: 400,
      message: "metadata.x must not contain NUL characters (U+0000), which cannot be stored",
      field: "metadata",
    }),
  );
  assert.equal(refused(Chat, chat({ metadata: { x: "a\u0000" } })), {
    status: 400,
    message: "metadata.x must not contain NUL characters (U+0000), which cannot be stored",
    field: "metadata",
  });
  assert.equal(
    refused(Chat, chat({ messages: [user(), { role: "user", content: "x", cache_control: { type: "\ud800" } }] })),
    {
      status: 400,
      message: "messages[1].cache_control.type must be well-formed Unicode (it contains an unpaired surrogate)",
      field: "messages[1].cache_control",
    },
  );
  assert.equal(refused(Chat, chat({ "k\u0000": 1 })), {
    status: 400,
    message:
      'The request body has a key "k\\u0000" that must not contain NUL characters (U+0000), which cannot be stored',
    field: null,
  });
  assert.equal(refused(Chat, chat({ provider: { "k\u0000": 1 } })).field, "provider");
  assert.equal(refused(Chat, chat({ metadata: nested(101) })).message, "metadata is nested more than 100 levels deep");
  assert.is(
    compiled(Chat, chat({ metadata: nested(100) })).outcome,
    ACCEPTED,
    "100 levels: as deep as a Struct field may go",
  );
  assert.equal(refused(Chat, chat({ metadata: { n: Number.NaN } })).message, "metadata.n must be a finite number");
  assert.equal(refused(Embedding, embed({ "odd key": ["\u0000"] })), {
    status: 400,
    message: '["odd key"][0] must not contain NUL characters (U+0000), which cannot be stored',
    field: '["odd key"]',
  });
  // After the others: a broken rule anywhere is reported instead.
  assert.equal(refused(Chat, chat({ metadata: { x: "\u0000" }, max_tokens: 0 })).field, "max_tokens");
  assert.is(
    compiled(
      Chat,
      chat({ metadata: { x: "fine" }, messages: [{ role: "user", cache_control: { type: "ephemeral" } }] }),
    ).outcome,
    ACCEPTED,
  );
});

test("a `__proto__` member of free-form JSON is checked, which the two-step path cannot see", () => {
  const body = JSON.parse(
    '{"messages":[{"role":"user","content":"x"}],"response_format":{"__proto__":{"a":"\\u0000"}}}',
  ) as JsonObject;
  assert.is(expected(Chat, body), ACCEPTED);
  assert.is(
    JSON.parse(compiled(Chat, body).outcome).message,
    "response_format.__proto__.a must not contain NUL characters (U+0000), which cannot be stored",
  );
});

test.run();
