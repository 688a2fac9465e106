import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ProviderPreferencesSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { decodeWireJson } from "../../../wire/json-input.js";
import { usdNumber } from "../money/money.js";
import { providerFor } from "../providers/registry.js";
import { isObject } from "../providers/json-shape.js";
import { UpstreamError } from "../providers/provider.js";
import { estimatePromptTokens } from "./cost-estimate.js";
import type { Engine } from "../engine.js";
import { parametersIn, sessionIdOf, withoutGatewayFields } from "./request-fields.js";
import { CallCache } from "../response-cache/call-cache.js";

/**
 * POST /embeddings, on plain JSON like the chat pipeline (README.md beside this file). Providers
 * are always asked for float vectors; `base64` is made here as OpenAI defines it (little-endian
 * float32, base64), so every provider supports both. `session_id` and `user` stay at the gateway;
 * every other field goes upstream as sent, and answer fields the gateway does not know come back.
 */
export async function createEmbeddings(engine: Engine, body: JsonObject, ctx: HandlerContext): Promise<JsonObject> {
  const input = body.input ?? null;
  const count = checkInput(input);
  const upstreamBody = withoutGatewayFields(body);
  delete upstreamBody.encoding_format;
  const base64 = body.encoding_format === "base64";
  const cache = CallCache.of(engine, ctx, "embeddings", upstreamBody);
  const call = await engine
    .open(ctx, {
      api: "embeddings",
      bodies: [upstreamBody],
      modelIds: [typeof body.model === "string" ? body.model : ""],
      preferences: isObject(body.provider) ? decodeWireJson(ProviderPreferencesSchema, body.provider) : undefined,
      parameters: parametersIn(upstreamBody),
      user: typeof body.user === "string" ? body.user : undefined,
      sessionId: sessionIdOf(typeof body.session_id === "string" ? body.session_id : undefined, ctx),
      promptTokens: estimatePromptTokens(Array.isArray(input) ? input : [input]),
      completionTokens: 0,
      serverTools: [],
      streamed: false,
      cache,
    })
    .catch((err: unknown) => {
      // An identical call may be waiting on this one's cache flight.
      cache.land();
      throw err;
    });
  try {
    if (call.cached) {
      // A cached answer: our generation id and a cost of 0, its own token counts (docs/cache.md).
      call.settleCached();
      const answer = call.cached.answer;
      answer.id = call.generationId;
      if (isObject(answer.usage)) answer.usage.cost = 0;
      return base64 ? inBase64(answer) : answer;
    }
    const served = await call.attempt(async (target) => {
      const result = await providerFor(target.kind).chat.embeddings(target, upstreamBody, call.signal);
      if (result.vectors.length !== count)
        throw new UpstreamError("protocol", `expected ${count} vectors, got ${result.vectors.length}`);
      return result;
    });
    const { vectors, promptTokens, body: answer } = served.value;
    const usage = { promptTokens, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0 };
    const cost = call.settle(served, {
      status: "success",
      httpStatus: 200,
      usage,
      latencyMs: served.latencyMs,
      generationMs: served.latencyMs,
    });
    const list: JsonObject = {
      ...answer,
      object: "list",
      id: call.generationId,
      model: served.attempt.model.id,
      data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: vector })),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, cost: usdNumber(cost) },
    };
    // Stored with float vectors; base64 is made for each answer.
    cache.store(served.attempt, list, usage, cost, Math.floor(Date.now() / 1000));
    return base64 ? inBase64(list) : list;
  } finally {
    cache.land();
    call.close();
  }
}

/** The list with each vector as OpenAI's base64 (little-endian float32). */
function inBase64(list: JsonObject): JsonObject {
  const data = Array.isArray(list.data) ? list.data : [];
  return {
    ...list,
    data: data.map((item) =>
      isObject(item) && Array.isArray(item.embedding)
        ? { ...item, embedding: toBase64(item.embedding as number[]) }
        : item,
    ),
  };
}

/**
 * The input forms OpenAI accepts, each with at least one item: a string, an array of strings, an
 * array of token ids, an array of token-id arrays, or an array of multimodal objects. Returns how
 * many vectors the answer must hold.
 */
function checkInput(input: JsonValue | null): number {
  if (input === null) throw gatewayError(400, "input is required");
  if (typeof input === "string") {
    if (input === "") throw gatewayError(400, "input must not be empty");
    return 1;
  }
  if (!Array.isArray(input))
    throw gatewayError(
      400,
      "input must be a string, an array of strings, an array of token ids, " +
        "an array of token-id arrays or an array of input objects",
    );
  if (input.length === 0) throw gatewayError(400, "input must contain at least 1 item");
  if (input.every((item) => typeof item === "number")) {
    if (!input.every((item) => Number.isInteger(item) && (item as number) >= 0))
      throw gatewayError(400, "input token ids must be non-negative integers");
    return 1;
  }
  for (const [index, item] of input.entries()) {
    if (typeof item === "string") {
      if (item === "") throw gatewayError(400, `input[${index}] must not be empty`);
    } else if (Array.isArray(item)) {
      if (item.length === 0) throw gatewayError(400, `input[${index}] must contain at least 1 token id`);
      if (!item.every((token) => Number.isInteger(token) && (token as number) >= 0))
        throw gatewayError(400, `input[${index}] must be an array of non-negative integer token ids`);
    } else if (item === null || typeof item !== "object") {
      throw gatewayError(400, `input[${index}] must be a string, a token-id array or an input object`);
    }
  }
  const kinds = new Set(
    input.map((item) => (typeof item === "string" ? "string" : Array.isArray(item) ? "tokens" : "object")),
  );
  if (kinds.size > 1)
    throw gatewayError(400, "input items must all be of one kind: strings, token-id arrays or input objects");
  return input.length;
}

function toBase64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}
