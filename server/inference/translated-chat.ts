import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ChatCompletionChunkSchema, ChatCompletionRequestSchema, ChatCompletionSchema, type ChatCompletionRequest } from "../../gen/gateway/v1/inference_pb.js";
import { assertValid } from "../core/validation.js";
import { wireJson } from "../../wire/json.js";
import { decodeWireJson } from "../../wire/json-input.js";
import { chatCompletions } from "./chat-completions.js";
import type { FormatIds, StreamIds } from "./formats/format-fields.js";
import type { InferenceRuntime } from "./inference-call.js";

/**
 * Another API format served by the chat completions pipeline: its request is translated to a chat
 * request, which then goes through exactly what POST /chat/completions does (validation of the
 * chat fields, governance, routing, budgets, the ledger), and the chat answer or chunk stream is
 * translated back. One implementation per format: the Responses and the Messages API.
 */
export interface ChatTranslation {
  toChat(body: JsonObject): JsonObject;
  fromCompletion(completion: JsonObject, ids: FormatIds): JsonObject;
  fromChunks(chunks: AsyncIterable<JsonObject>, ids: StreamIds): AsyncIterable<JsonObject>;
}

export type TranslatedOutput = { kind: "reply"; value: JsonObject } | { kind: "event"; value: JsonObject };

export async function* translatedChat(runtime: InferenceRuntime, body: JsonObject | undefined, ctx: HandlerContext, format: ChatTranslation): AsyncGenerator<TranslatedOutput> {
  const request = chatRequest(format.toChat(body ?? {}));
  const createdAt = Math.floor(Date.now() / 1000);
  const events = chatCompletions(runtime, request, ctx);
  if (request.stream !== true) {
    for await (const { event } of events) {
      if (event?.case !== "completion") continue;
      // `create` returns a message as is; the handler yields messages, typed as their init shape.
      const completion = wireJson(ChatCompletionSchema, create(ChatCompletionSchema, event.value)) as JsonObject;
      yield { kind: "reply", value: format.fromCompletion(completion, { id: String(completion.id), createdAt }) };
    }
    return;
  }
  for await (const value of format.fromChunks(chunksOf(events), { createdAt })) yield { kind: "event", value };
}

async function* chunksOf(events: ReturnType<typeof chatCompletions>): AsyncGenerator<JsonObject> {
  for await (const { event } of events) {
    if (event?.case === "chunk") yield wireJson(ChatCompletionChunkSchema, create(ChatCompletionChunkSchema, event.value)) as JsonObject;
  }
}

/**
 * The translated body as a chat request, decoded as the REST facade decodes a chat body and held
 * to the chat endpoint's rules. Its field names are the chat ones, which the translation keeps
 * where the formats share a name.
 */
function chatRequest(body: JsonObject): ChatCompletionRequest {
  const request = decodeWireJson(ChatCompletionRequestSchema, body);
  assertValid(ChatCompletionRequestSchema, request);
  return request;
}
