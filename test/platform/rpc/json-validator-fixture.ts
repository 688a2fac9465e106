import type { DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { UploadFileRequestSchema } from "../../../gen/gateway/v1/files_pb.js";
import { CreateGuardrailRequestSchema } from "../../../gen/gateway/v1/guardrails_pb.js";
import { ChatCompletionRequestSchema, CreateEmbeddingRequestSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { CreateKeyRequestSchema } from "../../../gen/gateway/v1/keys_pb.js";
import { CreatePrivateEndpointRequestSchema } from "../../../gen/gateway/v1/private_endpoints_pb.js";
import { jsonViolation, keySegment, keyViolation } from "../../../server/platform/rpc/json-rules.js";
import { compileJsonValidator } from "../../../server/platform/rpc/json-validator.js";
import { assertValid } from "../../../server/platform/rpc/validation.js";
import { httpErrorOf } from "../../../wire/errors.js";
import { decodeWireJson, findField } from "../../../wire/json-input.js";

/**
 * What the compiled JSON validator's unit suites share: the reference they compare it with, the
 * two-step path it replaces on the inference routes, `assertValid(schema, decodeWireJson(schema,
 * body))`, which must give the same 400 (message and field) for every body, or acceptance, plus the
 * one rule the compiled validator adds (unknown fields are checked as free-form JSON, after
 * everything else); the request messages the suites use; and the valid bodies that
 * json-validator-valid-bodies.unit.test.ts accepts and json-validator-fuzz.unit.test.ts mutates.
 *
 * @module
 */

export const Chat = ChatCompletionRequestSchema;
export const Embedding = CreateEmbeddingRequestSchema;
export const Guardrail = CreateGuardrailRequestSchema;
export const Endpoint = CreatePrivateEndpointRequestSchema;
export const Key = CreateKeyRequestSchema;
export const Upload = UploadFileRequestSchema;
export const SCHEMAS = [Chat, Embedding, Guardrail, Endpoint, Key, Upload];
export const ACCEPTED = "accepted";

/** A 400 as a comparable string: status, message, field. */
export function outcomeOf(run: () => void): string {
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
export function expected(schema: DescMessage, body: JsonObject): string {
  const twoStep = outcomeOf(() => assertValid(schema, decodeWireJson(schema, structuredClone(body))));
  return twoStep === ACCEPTED ? (unknownFieldOutcome(schema, body, "") ?? ACCEPTED) : twoStep;
}

/** The compiled validator's answer on a copy, and the copy as it left it. */
export function compiled(schema: DescMessage, body: JsonObject): { outcome: string; normalized: JsonObject } {
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
export function meaning(schema: DescMessage, body: JsonObject): JsonValue {
  return toJson(schema, decodeWireJson(schema, structuredClone(body)));
}

/** Nested arrays around 1: `levels` arrays deep. */
export function nested(levels: number): JsonValue {
  let value: JsonValue = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

export const user = (content: JsonValue = "hi"): JsonObject => ({ role: "user", content });
export const chat = (extra: JsonObject): JsonObject => ({ model: "mock/chat", messages: [user()], ...extra });
export const embed = (extra: JsonObject): JsonObject => ({ model: "mock/embed", input: "hello", ...extra });
export const UUID = "123e4567-e89b-12d3-a456-426614174000";
export const pricing = { prompt: "0.5", completion: "1" };
export const endpoint = (extra: JsonObject): JsonObject => ({
  model_permaslug: "m",
  provider_slug: "p",
  upstream_model_id: "u",
  ...extra,
});

export const VALID: Array<[string, DescMessage, JsonObject]> = [
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
export const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
