import * as assert from "uvu/assert";
import {
  create,
  createFileRegistry,
  ScalarType,
  setExtension,
  toJson,
  type DescMessage,
  type JsonObject,
  type JsonValue,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { UploadFileRequestSchema } from "../../../gen/gateway/v1/files_pb.js";
import { CreateGuardrailRequestSchema } from "../../../gen/gateway/v1/guardrails_pb.js";
import { ChatCompletionRequestSchema, CreateEmbeddingRequestSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { CreateKeyRequestSchema } from "../../../gen/gateway/v1/keys_pb.js";
import {
  file_gateway_v1_options,
  FieldRulesSchema,
  rules as rulesOption,
  type FieldRules,
} from "../../../gen/gateway/v1/options_pb.js";
import { CreatePrivateEndpointRequestSchema } from "../../../gen/gateway/v1/private_endpoints_pb.js";
import { jsonViolation, keySegment, keyViolation } from "../../../server/platform/rpc/json-rules.js";
import { compileJsonValidator } from "../../../server/platform/rpc/json-validator.js";
import { assertValid } from "../../../server/platform/rpc/validation.js";
import { httpErrorOf } from "../../../wire/errors.js";
import { decodeWireJson, findField } from "../../../wire/json-input.js";
import { suite } from "../../support/suite.js";

/**
 * The compiled JSON validator against the two-step path it replaces on the inference routes,
 * `assertValid(schema, decodeWireJson(schema, body))`: the same 400 (message and field) for every
 * body, or acceptance, plus the one rule the compiled validator adds (unknown fields are checked as
 * free-form JSON, after everything else). Bodies are compared as a table of hand-written cases, as
 * valid bodies whose normalized form must decode as the original does, and by a seeded fuzz of
 * mutated valid bodies.
 */
const test = suite("compiled JSON validator");

const Chat = ChatCompletionRequestSchema;
const Embedding = CreateEmbeddingRequestSchema;
const Guardrail = CreateGuardrailRequestSchema;
const Endpoint = CreatePrivateEndpointRequestSchema;
const Key = CreateKeyRequestSchema;
const Upload = UploadFileRequestSchema;
const SCHEMAS = [Chat, Embedding, Guardrail, Endpoint, Key, Upload];

const ACCEPTED = "accepted";

/** A 400 as a comparable string: status, message, field. */
function outcomeOf(run: () => void): string {
  try {
    run();
    return ACCEPTED;
  } catch (error) {
    if (!(error instanceof ConnectError)) return `threw ${String(error)}`;
    const { status, message, field } = httpErrorOf(error);
    return JSON.stringify({ status, message, field: field ?? null });
  }
}

/**
 * What the compiled validator must answer: the two-step path's answer, and where that accepts, the
 * first unknown field (document order) whose key or value breaks the free-form rules.
 */
function expected(schema: DescMessage, body: JsonObject): string {
  const twoStep = outcomeOf(() => assertValid(schema, decodeWireJson(schema, structuredClone(body))));
  return twoStep === ACCEPTED ? (unknownFieldOutcome(schema, body, "") ?? ACCEPTED) : twoStep;
}

/** The compiled validator's answer on a copy, and the copy as it left it. */
function compiled(schema: DescMessage, body: JsonObject): { outcome: string; normalized: JsonObject } {
  const normalized = structuredClone(body);
  return { outcome: outcomeOf(() => compileJsonValidator(schema)(normalized)), normalized };
}

/**
 * The unknown-field rule, written out plainly: walk the known messages in key order (a field given
 * by both its names counts once, at its first non-null place, with its last non-null value); an
 * unknown key breaking the text rule is reported on the object holding it, an unknown value through
 * the free-form walk under the key's path.
 */
function unknownFieldOutcome(schema: DescMessage, object: JsonObject, name: string): string | undefined {
  const done = new Set<string>();
  for (const [key, value] of Object.entries(object)) {
    const field = findField(schema, key);
    if (!field) {
      const badKey = keyViolation(key, name || "The request body");
      if (badKey) return JSON.stringify({ status: 400, message: badKey, field: name || null });
      const segment = keySegment(key);
      const path = name ? name + segment : segment.replace(/^\./, "");
      const violation = jsonViolation(value, path);
      if (violation) return JSON.stringify({ status: 400, message: violation, field: path });
      continue;
    }
    if (value === null || done.has(field.name)) continue;
    done.add(field.name);
    const kept = Object.entries(object)
      .filter(([k, v]) => findField(schema, k) === field && v !== null)
      .pop()![1];
    const path = name ? `${name}.${field.name}` : field.name;
    const message =
      field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map"
        ? field.message
        : undefined;
    if (!message || message.typeName.startsWith("google.")) continue;
    const found =
      field.fieldKind === "list"
        ? firstOf(
            (kept as JsonValue[]).map((item, i) => unknownFieldOutcome(message, item as JsonObject, `${path}[${i}]`)),
          )
        : field.fieldKind === "map"
          ? firstOf(
              Object.entries(kept as JsonObject).map(([k, item]) =>
                unknownFieldOutcome(message, item as JsonObject, path + keySegment(k)),
              ),
            )
          : unknownFieldOutcome(message, kept as JsonObject, path);
    if (found) return found;
  }
  return undefined;
}

function firstOf(outcomes: Array<string | undefined>): string | undefined {
  return outcomes.find((outcome) => outcome !== undefined);
}

/** The decoded message as JSON, for comparing what a body means. */
function meaning(schema: DescMessage, body: JsonObject): JsonValue {
  return toJson(schema, decodeWireJson(schema, structuredClone(body)));
}

/** Nested arrays around 1: `levels` arrays deep. */
function nested(levels: number): JsonValue {
  let value: JsonValue = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

const user = (content: JsonValue = "hi"): JsonObject => ({ role: "user", content });
const chat = (extra: JsonObject): JsonObject => ({ model: "mock/chat", messages: [user()], ...extra });
const embed = (extra: JsonObject): JsonObject => ({ model: "mock/embed", input: "hello", ...extra });
const UUID = "123e4567-e89b-12d3-a456-426614174000";
const pricing = { prompt: "0.5", completion: "1" };
const endpoint = (extra: JsonObject): JsonObject => ({
  model_permaslug: "m",
  provider_slug: "p",
  upstream_model_id: "u",
  ...extra,
});

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

const VALID: Array<[string, DescMessage, JsonObject]> = [
  ["a plain chat", Chat, chat({})],
  [
    "a chat with every kind of field",
    Chat,
    {
      model: "openai/gpt-4o",
      models: ["a/b", "c/d"],
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "hi 😀" },
            { type: "image_url", image_url: { url: "https://x/y.png" } },
          ],
          name: "ann",
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
          reasoning: "r",
        },
        { role: "tool", tool_call_id: "c1", content: "42" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.7,
      top_p: 1,
      max_tokens: 100,
      max_completion_tokens: "200",
      stop: ["\n\n"],
      n: 1,
      seed: "-42",
      frequency_penalty: -2,
      presence_penalty: 2,
      logit_bias: { "50256": -100, "a b": 1.5 },
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "d",
            parameters: { type: "object", properties: { city: { type: "string" } } },
            strict: true,
          },
        },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object" } } },
      logprobs: true,
      top_logprobs: 20,
      user: "😀".repeat(512),
      provider: { order: ["openai"], allow_fallbacks: false, sort: "price", data_collection: "deny", zdr: true },
      session_id: "s".repeat(256),
      reasoning: { effort: "high" },
      extra_body: { reasoning_effort: "low" },
    },
  ],
  [
    "lowerCamel names, nulls and digit strings",
    Chat,
    {
      model: "m",
      messages: [{ role: "tool", toolCallId: "c", content: "x", name: null }],
      maxTokens: "7",
      topLogprobs: "0",
      streamOptions: { includeUsage: true },
      stop: null,
      temperature: null,
    },
  ],
  ["both names, the earlier null", Chat, chat({ max_tokens: null, maxTokens: 3 })],
  ["both names, the later wins in the earlier's place", Chat, chat({ maxTokens: 0, temperature: 1, max_tokens: 9 })],
  ["implicit zero values are not set", Chat, chat({ model: "", seed: 0 })],
  [
    "deep but within protobuf-es' limits",
    Chat,
    chat({ response_format: { a: nested(97) }, stop: nested(97), messages: [user(nested(96))] }),
  ],
  [
    "unknown fields at every level",
    Chat,
    chat({
      metadata: { a: [1, { b: "c" }] },
      messages: [{ role: "user", content: "x", cache_control: { type: "ephemeral" } }],
      provider: { quantizations: ["fp8"] },
      "odd key": 1,
    }),
  ],
  [
    "an embedding",
    Embedding,
    embed({
      input: ["a", "b"],
      dimensions: 256,
      encoding_format: "base64",
      input_type: "search_query",
      provider: { allow_fallbacks: false },
      trace: { trace_id: "t" },
    }),
  ],
  ["token ids", Embedding, embed({ input: [[1, 2], [3]] })],
  [
    "a guardrail",
    Guardrail,
    {
      name: "g",
      description: "d",
      limit_usd: 0,
      reset_interval: "monthly",
      allowed_models: ["a"],
      allowed_data_regions: ["us", "europe"],
      content_filter_builtins: [{ slug: "email", action: "redact" }],
      content_filters: [{ pattern: "x" }],
      workspace_id: UUID,
      enforce_zdr: true,
    },
  ],
  [
    "an endpoint",
    Endpoint,
    endpoint({ base_url: "https://x.example/v1", declared_region: "europe", declared_zdr: true, pricing }),
  ],
  ["a key", Key, { name: "k", limit: 5, limit_reset: "daily", expires_at: "2030-12-31T23:59:59Z", workspace_id: UUID }],
  ["an upload's metadata", Upload, { metadata: { workspace_id: UUID, provider: "openai", filename: "a.jsonl" } }],
  ["an upload's chunk", Upload, { chunk: "aGVsbG8=" }],
];

/** Where a body has unknown fields (known fields named by proto name): each one's path and its value as JSON text. */
function unknownFields(
  schema: DescMessage,
  object: JsonObject,
  name: string,
  into: Map<string, string>,
): Map<string, string> {
  for (const [key, value] of Object.entries(object)) {
    const field = findField(schema, key);
    const path = `${name}/${field?.name ?? key}`;
    if (!field) into.set(path, JSON.stringify(value));
    else if (field.fieldKind === "message" && !field.message.typeName.startsWith("google.") && value !== null)
      unknownFields(field.message, value as JsonObject, path, into);
    else if (
      field.fieldKind === "list" &&
      field.message &&
      !field.message.typeName.startsWith("google.") &&
      Array.isArray(value)
    ) {
      value.forEach((item, i) => unknownFields(field.message!, item as JsonObject, `${path}/${i}`, into));
    }
  }
  return into;
}

test("valid bodies are accepted, normalized to what they mean, unknown fields untouched", () => {
  for (const [label, schema, body] of VALID) {
    assert.is(expected(schema, body), ACCEPTED, `${label}: the reference refuses it`);
    const { outcome, normalized } = compiled(schema, body);
    assert.is(outcome, ACCEPTED, label);
    assert.equal(meaning(schema, normalized), meaning(schema, body), `${label}: meaning`);
    assertNormal(schema, normalized, label);
    assert.equal(
      unknownFields(schema, normalized, "", new Map()),
      unknownFields(schema, body, "", new Map()),
      `${label}: unknown fields`,
    );
  }
});

const TEXT_SCALARS = [ScalarType.STRING, ScalarType.BYTES, ScalarType.BOOL];

/** Known fields by proto name only, no nulls, integers as numbers, enums as wire strings. */
function assertNormal(schema: DescMessage, object: JsonObject, label: string): void {
  for (const [key, value] of Object.entries(object)) {
    const field = findField(schema, key);
    if (!field) continue;
    assert.is(key, field.name, `${label}: ${key} keeps its JSON name`);
    assert.is.not(value, null, `${label}: ${key} is null`);
    const message = field.fieldKind === "message" || field.fieldKind === "list" ? field.message : undefined;
    if (field.fieldKind === "scalar" && !TEXT_SCALARS.includes(field.scalar))
      assert.is.not(typeof value, "string", `${label}: ${key} is a digit string`);
    if (field.fieldKind === "enum") assert.type(value, "string", `${label}: ${key}`);
    if (message && !message.typeName.startsWith("google.")) {
      for (const item of field.fieldKind === "list" ? (value as JsonObject[]) : [value as JsonObject])
        assertNormal(message, item, label);
    }
  }
}

test("the body is normalized in place: renamed, nulls gone, digit strings numbers, enums strings", () => {
  const body: JsonObject = {
    model: "m",
    messages: [{ role: "tool", toolCallId: "c", content: null }],
    maxTokens: "7",
    seed: "-3",
    temperature: null,
    provider: { sort: "price" },
    topP: 0.5,
  };
  compileJsonValidator(Chat)(body);
  assert.equal(body, {
    model: "m",
    messages: [{ role: "tool", tool_call_id: "c" }],
    max_tokens: 7,
    seed: -3,
    provider: { sort: "price" },
    top_p: 0.5,
  });
  assert.equal(
    Object.keys(body),
    ["model", "messages", "max_tokens", "seed", "provider", "top_p"],
    "renamed fields keep their place",
  );
  const both: JsonObject = { maxTokens: 1, model: "m", messages: [user()], max_tokens: 2 };
  compileJsonValidator(Chat)(both);
  assert.equal(Object.keys(both), ["max_tokens", "model", "messages"]);
  assert.is(both.max_tokens, 2, "the later of two names wins, as decodeWireJson reads them");
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

/**
 * A message of one-off fields with `(gateway.v1.rules)`, for what the request messages have no
 * example of: implicit-presence scalars whose zero value would break a rule, bytes, float.
 */
function synthetic(
  fields: Array<{ name: string; type: FieldDescriptorProto_Type; rules?: Omit<Partial<FieldRules>, "$typeName"> }>,
): DescMessage {
  const file = create(FileDescriptorProtoSchema, {
    name: "synthetic.proto",
    package: "t",
    syntax: "proto3",
    dependency: ["gateway/v1/options.proto"],
    messageType: [
      {
        name: "M",
        field: fields.map(({ name, type, rules: fieldRules }, i) => {
          const options = create(FieldOptionsSchema);
          if (fieldRules) setExtension(options, rulesOption, create(FieldRulesSchema, fieldRules));
          return {
            name,
            jsonName: camel(name),
            number: i + 1,
            type,
            label: FieldDescriptorProto_Label.OPTIONAL,
            options,
          };
        }),
      },
    ],
  });
  return createFileRegistry(file, (name) =>
    name === "gateway/v1/options.proto" ? file_gateway_v1_options : undefined,
  ).getMessage("t.M")!;
}

test("implicit-presence scalars: the zero value is not set, so only `required` applies to it", () => {
  const { INT32, DOUBLE, STRING, BOOL, BYTES } = FieldDescriptorProto_Type;
  const schema = synthetic([
    { name: "count", type: INT32, rules: { gte: 1 } },
    { name: "ratio", type: DOUBLE, rules: { gte: 1 } },
    { name: "code", type: STRING, rules: { pattern: "^a+$", maxLen: 3 } },
    { name: "flag", type: BOOL, rules: { required: true } },
    { name: "blob", type: BYTES, rules: { required: true } },
  ]);
  const bodies: JsonObject[] = [
    { count: 0, flag: true, blob: "AA==" },
    { count: "0", flag: true, blob: "AA==" },
    { count: -0, flag: true, blob: "AA==" },
    { count: "-0", flag: true, blob: "AA==" },
    { ratio: 0, flag: true, blob: "AA==" },
    { ratio: -0, flag: true, blob: "AA==" },
    { code: "", flag: true, blob: "AA==" },
    { code: "b", flag: true, blob: "AA==" },
    { code: "aaaa", flag: true, blob: "AA==" },
    { flag: false, blob: "AA==" },
    { flag: true, blob: "" },
    { flag: true, blob: "====" },
    { flag: true, blob: " \n" },
    { flag: true, blob: "A" },
    { flag: true, blob: "a-_b" },
    // A zero value before a broken rule: the first broken rule is the later field's.
    { count: 0, code: "b", flag: true, blob: "AA==" },
    { ratio: 0, code: "b", flag: true, blob: "AA==" },
    { code: "", flag: false, blob: "AA==" },
  ];
  const outcomes = bodies.map((body) => [JSON.stringify(body), expected(schema, body)]);
  assert.equal(
    bodies.map((body) => [JSON.stringify(body), compiled(schema, body).outcome]),
    outcomes,
  );
  assert.ok(
    outcomes.filter(([, outcome]) => outcome === ACCEPTED).length >= 5,
    "zero values pass rules they would break if set",
  );
});

test("types the request messages do not use are refused when compiling", () => {
  assert.throws(
    () => compileJsonValidator(synthetic([{ name: "f", type: FieldDescriptorProto_Type.FLOAT }])),
    /field t\.M\.f is a float/,
  );
  assert.is(compileJsonValidator(Chat), compileJsonValidator(Chat), "compiled once per schema");
});

// ---------------------------------------------------------------------------------------------
// Fuzz
// ---------------------------------------------------------------------------------------------

/** mulberry32: a small deterministic generator, so that a failure replays. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every field name of the schemas, both spellings, and names no message has. */
function namesOf(schemas: DescMessage[]): string[] {
  const names = new Set<string>(["metadata", "cache_control", "x", "odd key", "k\u0000", "\ud800", "", "0", "type"]);
  const seen = new Set<DescMessage>();
  const visit = (schema: DescMessage) => {
    if (seen.has(schema) || schema.typeName.startsWith("google.")) return;
    seen.add(schema);
    for (const field of schema.fields) {
      names.add(field.name).add(field.jsonName);
      const message =
        field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map"
          ? field.message
          : undefined;
      if (message) visit(message);
    }
  };
  schemas.forEach(visit);
  return [...names];
}

const LEAVES: JsonValue[] = [
  "",
  "x",
  "a\u0000b",
  "\ud800",
  "a\udc00b",
  "😀",
  "😀".repeat(300),
  "s".repeat(513),
  "user",
  "assistant",
  "tool",
  "system",
  "function",
  "price",
  "deny",
  "float",
  "base64",
  "monthly",
  "us",
  "mars",
  "openai",
  "flag",
  "0",
  "12",
  "-5",
  "007",
  "-0",
  "1.5",
  "abc",
  "9007199254740993",
  "4294967296",
  "-2147483649",
  UUID,
  "https://x.example",
  "http://x",
  "0.5",
  "2030-12-31T23:59:59Z",
  "tomorrow",
  "AAAA",
  "!!!",
  "f-1",
  "a b",
  0,
  -0,
  1,
  -1,
  2.5,
  1e300,
  2147483648,
  -2147483649,
  9007199254740992,
  100,
  21,
  513,
  -2.5,
  true,
  false,
  null,
  Number.NaN,
];

function pick<T>(rng: () => number, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

function randomValue(rng: () => number, names: string[], depth: number): JsonValue {
  const roll = rng();
  if (roll < 0.04) return nested(94 + Math.floor(rng() * 6));
  if (depth < 3 && roll < 0.2) {
    const object: JsonObject = {};
    for (let i = Math.floor(rng() * 3); i > 0; i--) object[pick(rng, names)] = randomValue(rng, names, depth + 1);
    return object;
  }
  if (depth < 3 && roll < 0.32)
    return Array.from({ length: Math.floor(rng() * 3) }, () => randomValue(rng, names, depth + 1));
  if (roll < 0.36) return { role: "user", content: randomValue(rng, names, depth + 1) };
  return pick(rng, LEAVES);
}

/** Every object and array of a body. */
function containers(value: JsonValue, into: Array<JsonObject | JsonValue[]> = []): Array<JsonObject | JsonValue[]> {
  if (value !== null && typeof value === "object") {
    into.push(value);
    for (const child of Array.isArray(value) ? value : Object.values(value)) containers(child, into);
  }
  return into;
}

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function mutate(rng: () => number, body: JsonObject, names: string[]): void {
  const target = pick(rng, containers(body));
  if (Array.isArray(target)) {
    const i = Math.floor(rng() * (target.length + 1));
    const roll = rng();
    const at = Math.min(i, target.length - 1);
    if (typeof target[at] === "string" && roll < 0.2) target[at] += pick(rng, ["\u0000", "\ud800"]);
    else if (roll < 0.2 && target.length > 0) target.splice(at, 1);
    else if (roll < 0.35) target.splice(i, 0, randomValue(rng, names, 1));
    else if (target.length > 0) target[at] = roll < 0.45 ? null : randomValue(rng, names, 1);
    return;
  }
  const keys = Object.keys(target);
  const key = keys.length > 0 && rng() < 0.7 ? pick(rng, keys) : pick(rng, names);
  const roll = rng();
  const current = target[key];
  if (typeof current === "string" && roll < 0.3) target[key] = current + pick(rng, ["\u0000", "\ud800", "😀"]);
  else if (roll < 0.15) delete target[key];
  else if (roll < 0.25) target[key] = null;
  else if (roll < 0.4 && key in target) {
    // The other spelling of the name, sometimes beside the first.
    const other = camel(key) === key ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : camel(key);
    target[other] = rng() < 0.5 ? target[key]! : randomValue(rng, names, 1);
    if (rng() < 0.5) delete target[key];
  } else target[key] = randomValue(rng, names, 1);
}

test("a seeded fuzz of mutated valid bodies: the same answer as the two-step path", () => {
  const rng = random(0x5eed);
  const names = namesOf(SCHEMAS);
  const mismatches: string[] = [];
  let accepted = 0;
  let runs = 0;
  for (let round = 0; round < 300; round++) {
    for (const [label, schema, valid] of VALID) {
      const body = structuredClone(valid);
      for (let n = 1 + Math.floor(rng() * 3); n > 0; n--) mutate(rng, body, names);
      runs++;
      const want = expected(schema, body);
      const { outcome, normalized } = compiled(schema, body);
      if (outcome !== want) {
        mismatches.push(`${label} #${round}: ${JSON.stringify(body)}\n  want ${want}\n  got  ${outcome}`);
        continue;
      }
      if (outcome !== ACCEPTED) continue;
      accepted++;
      const same = JSON.stringify(meaning(schema, normalized)) === JSON.stringify(meaning(schema, body));
      const again = compiled(schema, normalized);
      if (!same || again.outcome !== ACCEPTED || JSON.stringify(again.normalized) !== JSON.stringify(normalized)) {
        mismatches.push(`${label} #${round}: normalized ${JSON.stringify(normalized)} of ${JSON.stringify(body)}`);
      }
    }
  }
  assert.ok(runs >= 3000, `${runs} runs`);
  assert.ok(accepted > runs / 10 && accepted < runs * 0.9, `${accepted} of ${runs} accepted: the fuzz should mix both`);
  assert.equal(mismatches.slice(0, 5), [], `${mismatches.length} mismatches`);
});

test.run();
