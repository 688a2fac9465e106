import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { HandlerContext } from "@connectrpc/connect";
import type { NativeFormat } from "../providers/native-api.js";
import { chatCompletions } from "./chat-completions.js";
import {
  copyRoutingFields,
  copyScalars,
  isUntranslatable,
  optionalObject,
  optionalString,
  setIfDefined,
  type FormatIds,
  type StreamIds,
} from "./formats/format-fields.js";
import { chatToMessage, messagesToChat } from "./formats/messages-format.js";
import { MESSAGES_NATIVE } from "./formats/messages-native.js";
import { chatStreamToMessageEvents } from "./formats/messages-stream.js";
import { chatToResponse, responsesToChat } from "./formats/responses-format.js";
import { RESPONSES_NATIVE } from "./formats/responses-native.js";
import { chatStreamToResponseEvents } from "./formats/responses-stream.js";
import type { Engine } from "../engine.js";
import type { InferenceOutput } from "./inference-output.js";
import type { NativeAnswers, NativeRoute } from "./native-route.js";
import { withoutGatewayFields } from "./request-fields.js";
import { validateChatRequest } from "./request-validators.js";

/**
 * Another API format served by the chat completions pipeline (the Responses and the Messages API).
 * Its request is translated to a chat request, which goes through exactly what POST
 * /chat/completions does (the chat request validator, governance, routing, budgets, the ledger).
 * An endpoint whose provider speaks the format itself is sent the client's body instead (native:
 * docs/providers.md) and its answer comes back as it came; any other endpoint gets the chat
 * request, and its chat answer or chunk stream is translated back.
 */
export interface ApiFormat {
  name: NativeFormat;
  toChat(body: JsonObject): JsonObject;
  /** The fields routing and admission read, for a request chat cannot carry (only a native endpoint can serve it). */
  routingFields(body: JsonObject): JsonObject;
  /** The parts of the body whose text is the prompt. */
  promptParts(body: JsonObject): JsonValue[];
  /** The body a native endpoint is sent: the client's, without the gateway's own fields. */
  nativeBody(body: JsonObject): JsonObject;
  answers: NativeAnswers;
  fromCompletion(completion: JsonObject, ids: FormatIds): JsonObject;
  fromChunks(chunks: AsyncIterable<JsonObject>, ids: StreamIds): AsyncIterable<JsonObject>;
}

export async function* translatedChat(
  engine: Engine,
  body: JsonObject,
  ctx: HandlerContext,
  format: ApiFormat,
): AsyncGenerator<InferenceOutput> {
  let request: JsonObject;
  let untranslatable: ConnectError | undefined;
  try {
    // Its field names are the chat ones, which the translation keeps where the formats share a name.
    request = format.toChat(body);
    validateChatRequest(request);
  } catch (err) {
    if (!isUntranslatable(err)) throw err;
    untranslatable = err;
    // Held to chat's rules all the same: its routing fields are read as a chat request's are.
    request = format.routingFields(body);
    validateChatRequest(request);
  }
  const native: NativeRoute = {
    format: format.name,
    body: format.nativeBody(body),
    untranslatable,
    promptParts: format.promptParts(body),
    answers: format.answers,
  };
  const createdAt = Math.floor(Date.now() / 1000);
  const outputs = chatCompletions(engine, request, ctx, native);
  if (request.stream !== true) {
    for await (const out of outputs) {
      if (out.kind === "reply")
        yield out.native
          ? out
          : { kind: "reply", value: format.fromCompletion(out.value, { id: String(out.value.id), createdAt }) };
    }
    return;
  }
  // The first event says which form the stream has: the endpoint's own, or chat chunks to translate.
  const iterator = outputs[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    if (!first.done && first.value.native) {
      yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
      return;
    }
    for await (const value of format.fromChunks(chunksOf(first, iterator), { createdAt }))
      yield { kind: "event", value };
  } finally {
    await iterator.return?.(undefined);
  }
}

async function* chunksOf(
  first: IteratorResult<InferenceOutput>,
  rest: AsyncIterator<InferenceOutput>,
): AsyncGenerator<JsonObject> {
  for (let next = first; !next.done; next = await rest.next()) {
    if (next.value.kind === "event") yield next.value.value;
  }
}

/**
 * Chat's stand-in for a request only a native endpoint can serve: what routing, admission and the
 * ledger read of it. Its one empty message is never sent (a translated attempt fails first).
 */
function routingOf(body: JsonObject, maxTokensField: string, user: string | undefined): JsonObject {
  const fields: JsonObject = { messages: [{ role: "user", content: "" }] };
  copyScalars(body, fields, { strings: ["model"], numbers: ["temperature", "top_p"], booleans: ["stream"] });
  setIfDefined(
    fields,
    "max_completion_tokens",
    typeof body[maxTokensField] === "number" ? body[maxTokensField] : undefined,
  );
  setIfDefined(fields, "user", user);
  copyRoutingFields(body, fields);
  return fields;
}

function partsOf(body: JsonObject, names: string[]): JsonValue[] {
  return names.flatMap((name) => (body[name] === undefined || body[name] === null ? [] : [body[name]!]));
}

/** POST /responses: the OpenAI Responses API. */
export const RESPONSES_API: ApiFormat = {
  name: "responses",
  toChat: responsesToChat,
  routingFields: (body) => routingOf(body, "max_output_tokens", optionalString(body.user, "user")),
  promptParts: (body) => partsOf(body, ["instructions", "input", "tools"]),
  nativeBody(body) {
    const out = withoutGatewayFields(body);
    // Chat's stream options are the gateway's to set; the Responses API's (include_obfuscation) are the client's.
    if (body.stream_options !== undefined) out.stream_options = body.stream_options;
    return out;
  },
  answers: RESPONSES_NATIVE,
  fromCompletion: chatToResponse,
  fromChunks: chatStreamToResponseEvents,
};

/** POST /messages: the Anthropic Messages API. Errors keep the gateway's error envelope rather than Anthropic's. */
export const MESSAGES_API: ApiFormat = {
  name: "messages",
  toChat: messagesToChat,
  routingFields: (body) =>
    routingOf(
      body,
      "max_tokens",
      optionalString(optionalObject(body.metadata, "metadata")?.user_id, "metadata.user_id"),
    ),
  promptParts: (body) => partsOf(body, ["system", "messages", "tools"]),
  nativeBody: withoutGatewayFields,
  answers: MESSAGES_NATIVE,
  fromCompletion: chatToMessage,
  fromChunks: chatStreamToMessageEvents,
};
