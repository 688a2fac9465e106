import type { JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { chatCompletions } from "./chat-completions.js";
import type { FormatIds, StreamIds } from "./formats/format-fields.js";
import { chatToMessage, messagesToChat } from "./formats/messages-format.js";
import { chatStreamToMessageEvents } from "./formats/messages-stream.js";
import { chatToResponse, responsesToChat } from "./formats/responses-format.js";
import { chatStreamToResponseEvents } from "./formats/responses-stream.js";
import type { InferenceRuntime } from "./inference-runtime.js";
import type { InferenceOutput } from "./inference-output.js";
import { validateChatRequest } from "./request-validators.js";

/**
 * Another API format served by the chat completions pipeline: its request is translated to a chat
 * request, which then goes through exactly what POST /chat/completions does (the chat request
 * validator, governance, routing, budgets, the ledger), and the chat answer or chunk stream is
 * translated back. One implementation per format: the Responses and the Messages API.
 */
export interface ChatTranslation {
  toChat(body: JsonObject): JsonObject;
  fromCompletion(completion: JsonObject, ids: FormatIds): JsonObject;
  fromChunks(chunks: AsyncIterable<JsonObject>, ids: StreamIds): AsyncIterable<JsonObject>;
}

export async function* translatedChat(runtime: InferenceRuntime, body: JsonObject, ctx: HandlerContext, format: ChatTranslation): AsyncGenerator<InferenceOutput> {
  // Its field names are the chat ones, which the translation keeps where the formats share a name.
  const request = format.toChat(body);
  validateChatRequest(request);
  const createdAt = Math.floor(Date.now() / 1000);
  const outputs = chatCompletions(runtime, request, ctx);
  if (request.stream !== true) {
    for await (const out of outputs) {
      if (out.kind === "reply") yield { kind: "reply", value: format.fromCompletion(out.value, { id: String(out.value.id), createdAt }) };
    }
    return;
  }
  for await (const value of format.fromChunks(chunksOf(outputs), { createdAt })) yield { kind: "event", value };
}

async function* chunksOf(outputs: AsyncIterable<InferenceOutput>): AsyncGenerator<JsonObject> {
  for await (const out of outputs) {
    if (out.kind === "event") yield out.value;
  }
}

/** POST /responses: the OpenAI Responses API. */
export const RESPONSES_API: ChatTranslation = { toChat: responsesToChat, fromCompletion: chatToResponse, fromChunks: chatStreamToResponseEvents };

/** POST /messages: the Anthropic Messages API. Errors keep the gateway's error envelope rather than Anthropic's. */
export const MESSAGES_API: ChatTranslation = { toChat: messagesToChat, fromCompletion: chatToMessage, fromChunks: chatStreamToMessageEvents };
